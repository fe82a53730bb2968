// knod verifier internals: control-flow structure (kernel check_subprogs / check_cfg).
#pragma once

#include <string>

#include "isa/insn.h"

namespace knod::verifier {

/// Checks jump/call targets, subprogram boundaries and fall-through, recursion and the static
/// call depth. Assumes every slot already passed the per-class checks. Returns "" or
/// "insn N: what".
std::string check_cfg(const InsnVec& prog);

}  // namespace knod::verifier
