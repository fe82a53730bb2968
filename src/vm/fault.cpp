// Names of run faults (vm/abi.h), as counted per reason and printed by the CLI.
#include "vm/abi.h"

namespace knod::vm {

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::kNone:
      return "none";
    case Fault::kOutOfBounds:
      return "out_of_bounds";
    case Fault::kInsnBudget:
      return "insn_budget";
    case Fault::kBadInsn:
      return "bad_insn";
    case Fault::kCallDepth:
      return "call_depth";
    case Fault::kBadHelper:
      return "bad_helper";
    case Fault::kCtxAccess:
      return "ctx_access";
  }
  return "unknown";
}

}  // namespace knod::vm
