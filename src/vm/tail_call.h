// What bpf_tail_call(ctx, prog_array, index) does once its arguments are known good (kernel
// kernel/bpf/core.c ___bpf_prog_run JMP_TAIL_CALL, bpf_tail_call's verifier-checked args):
// shared by the helper (xdp/helpers_redirect.cpp) and the JIT's direct call
// (jit/executor.cpp knod_host_tail_jump).
#pragma once

#include <cstdint>

#include "maps/prog_array.h"
#include "vm/abi.h"

namespace knod::vm {

/// Sets run.tail_target to the program in slot `index` of `pa` unless the slot is out of range
/// or empty or kMaxTailCalls were taken (then the call falls through). Returns r0 (0).
inline uint64_t tail_call_to(Run& run, const maps::ProgArray& pa, uint64_t index) {
  const uint32_t idx = uint32_t(index);
  if (idx >= pa.def().max_entries) return 0;
  if (run.tail_calls >= uint32_t(kMaxTailCalls)) return 0;
  const int64_t prog = pa.get(idx);
  if (prog < 0 || !run.env || uint64_t(prog) >= run.env->programs.size() ||
      !run.env->programs[prog])
    return 0;
  run.tail_target = run.env->programs[prog];
  return 0;
}

}  // namespace knod::vm
