// An executor runs a prepared Program for one Run: the reference interpreter (vm/interp) or
// native code from the JIT (jit/, device/cpu). GPU devices run whole batches instead.
#pragma once

#include <cstdint>
#include <memory>

#include "vm/abi.h"

namespace knod::vm {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs `prog` (which must belong to run.env) with r1, r2 as given (r1 = ctx for XDP;
  /// r1 = memory, r2 = its length for the conformance suite). Returns r0. On a fault the
  /// return value is 0 and run.fault / run.fault_pc say why and where. Follows tail calls.
  virtual uint64_t run(Run& run, const Program& prog, uint64_t r1, uint64_t r2) = 0;
  virtual const char* name() const = 0;
};

}  // namespace knod::vm
