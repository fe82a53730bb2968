// Text output of the JIT for `knod jit`: the LLVM IR of a program (after runtime linking and
// the -O pipeline) or the host assembly it compiles to.
#pragma once

#include <string>
#include <vector>

#include "isa/insn.h"
#include "jit/lower.h"

namespace knod::jit {

struct EmitOptions {
  int opt_level = 2;
  CtxKind ctx = CtxKind::kOpaque;
  bool assembly = false;     ///< true: x86-64 assembly; false: LLVM IR
  bool link_runtime = true;  ///< false: IR as lowered (runtime calls left as declarations)
  /// With ctx kXdp and the runtime linked: also the slot loop the CPU device runs, with the
  /// body inlined (jit/slots.h; none at -O0 or past kSlotsBodyMax), as knod run compiles it.
  bool slot_loop = false;
  std::string name = "knod_prog";
  std::vector<MapDesc> maps;  ///< the object's maps (jit/map_desc.h): typed/inlined lookups
};

/// Lowers `insns` and returns the IR or assembly text; `stats` gets the access counts.
/// Throws knod::Error for a program that cannot be lowered.
std::string emit(const InsnVec& insns, const EmitOptions& opts, LowerStats* stats = nullptr);

}  // namespace knod::jit
