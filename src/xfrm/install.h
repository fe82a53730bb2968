// Installing a parsed `ip xfrm` file into a SAD and SPD with the kernel's add/update rules.
#pragma once

#include "xfrm/parse/ip_xfrm.h"
#include "xfrm/sad.h"
#include "xfrm/spd.h"

namespace knod::xfrm {

/// Installs `cfg` in file order: `state add` (Sad::add: "File exists" when that (dst, SPI,
/// proto) is installed, as the kernel's EEXIST), `state update` (Sad::update: "No such
/// process" when it is not, ESRCH), then the policies (Spd::add: "File exists" for a second
/// `policy add` of one selector and dir; Spd::update replaces). Errors are prefixed
/// "FILE:LINE: " when the line came from parse_text. Throws knod::Error; what came before the error
/// stays.
void install(const XfrmConfig& cfg, Sad& sad, Spd& spd);

}  // namespace knod::xfrm
