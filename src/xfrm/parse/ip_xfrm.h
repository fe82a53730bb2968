// The iproute2 grammar, verbatim: `ip xfrm state add ...` and `ip xfrm policy add ...`
// (ip-xfrm(8)). Lines may omit the leading `ip`; files hold one command a line, '#' comments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "xfrm/sa.h"
#include "xfrm/spd.h"

namespace knod::xfrm {

/// Everything a configuration file installs, in file order.
struct XfrmConfig {
  std::vector<SaConfig> states;
  std::vector<Policy> policies;
  /// state_update[i]: states[i] came from `ip xfrm state update` (else `state add`); may be
  /// shorter than `states` (missing: add).
  std::vector<uint8_t> state_update;
  /// state_where[i]: "FILE:LINE" of states[i] when parse_text read it; may be shorter.
  std::vector<std::string> state_where;
  /// The same for policies: `ip xfrm policy update` (else `policy add`), and where.
  std::vector<uint8_t> policy_update;
  std::vector<std::string> policy_where;
};

/// Parses one line into `out` (appends a state or a policy; blank/comment lines add nothing).
/// Throws knod::Error naming the offending word for anything unsupported or malformed.
void parse_line(std::string_view line, XfrmConfig& out);
/// Parses many lines; errors are prefixed with "`name`:LINE: ".
XfrmConfig parse_text(std::string_view text, std::string_view name = "<text>");
/// Reads and parses a file. Throws knod::Error when it cannot be read.
XfrmConfig parse_file(const std::string& path);

/// One-line summaries in ip-xfrm words (for `knod xfrm` and reports).
std::string format_state(const SaConfig& c);
std::string format_policy(const Policy& p);
const char* cipher_name(Cipher c);
const char* auth_name(Auth a);

}  // namespace knod::xfrm
