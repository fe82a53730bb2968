// knod reference interpreter: executes a prepared Program exactly as RFC 9669 (incl. v4)
// and the kernel define it, one instruction at a time, checking every memory access.
// The oracle the JIT and the GPU executors are compared against.
#pragma once

#include "vm/executor.h"

namespace knod::vm {

/// Semantics (RFC 9669; where it is silent, the kernel's interpreter kernel/bpf/core.c):
///   - ALU32 results are zero-extended to 64 bits; shift counts are masked to 63 / 31.
///   - div by 0 gives 0; mod by 0 leaves dst unchanged (32-bit: zero-extended);
///     signed INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0.
///   - Every load/store/atomic goes through the ctx hooks (address in [ctx_lo, ctx_hi)) or
///     must lie in one Region of the run (Run::can_access); otherwise Fault::kOutOfBounds.
///   - Each bpf-to-bpf frame has its own zeroed 512-byte stack and r10; r6-r9 are preserved
///     across calls; more than kMaxCallDepth frames faults with kCallDepth. The active stack
///     frames are one Region added to the run while it executes (helpers may take stack
///     pointers).
///   - Helpers come from run.env->helpers; after each: run.fault stops the run, run.exit_now
///     ends it with r0 = the helper's return, run.tail_target restarts the current frame at
///     insn 0 of the target (r1 kept, stack zeroed) while fewer than kMaxTailCalls were taken,
///     else execution falls through with the helper's return.
///   - ld_imm64 BPF_PSEUDO_FUNC yields a callable value for Run::call_func (bpf_loop...) and
///     callx; callx with any other value calls the helper of that id.
///   - More than run.insn_budget instructions faults with kInsnBudget.
/// On a fault run() returns 0 with run.fault and run.fault_pc (slot index) set.
class Interpreter : public Executor {
 public:
  uint64_t run(Run& run, const Program& prog, uint64_t r1, uint64_t r2) override;
  const char* name() const override { return "interp"; }
};

/// Tag of the value ld_imm64 BPF_PSEUDO_FUNC gives in the interpreter: kFuncTag | slot index.
constexpr uint64_t kFuncTag = 0xfb0f'0000'0000'0000ull;
constexpr uint64_t kFuncTagMask = 0xffff'ffff'0000'0000ull;

}  // namespace knod::vm
