// Helpers of the bpf_conformance suite's plugin ABI (not kernel helper ids).
#pragma once

#include "vm/abi.h"

namespace knod::vm {

/// Helper 5 "unwind": returns r1; when r1 == 0 the program stops at once with r0 = 0
/// (Run::exit_now). Used by call_unwind_fail.data and callx.data.
const HelperTable& conformance_helpers();

}  // namespace knod::vm
