// bpf_loop (181): calls callback_fn(index, callback_ctx) for index = 0..nr_loops-1 until it
// returns non-zero; returns the number of calls made. nr_loops > BPF_MAX_LOOPS (1 << 23) →
// -E2BIG as a u32 (the verifier's inlined loop), flags → -EINVAL. Source: kernel/bpf/bpf_iter.c
// bpf_loop, kernel/bpf/verifier.c inline_bpf_loop.
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

constexpr uint64_t kMaxLoops = 1u << 23;  // BPF_MAX_LOOPS

uint64_t loop(vm::Run& run, uint64_t nr_loops, uint64_t fn, uint64_t cb_ctx, uint64_t flags,
              uint64_t) {
  if (flags) return neg(EINVAL);
  // flags 0: the kernel's verifier inlines the call (inline_bpf_loop), which tests all 64 bits of
  // nr_loops and sets its error with a 32-bit move: 0x00000000fffffff9, not -7 sign-extended (a
  // program testing `r < 0` on a long sees a positive number, as under the kernel). An
  // approximation: the kernel inlines only where its verifier knows flags is 0 on every path
  // (a literal 0, as programs pass it); a register that is 0 only at run time gets the helper,
  // whose -E2BIG is sign-extended and whose nr_loops is 32 bits.
  if (nr_loops > kMaxLoops) return uint32_t(-E2BIG);
  const uint32_t n = uint32_t(nr_loops);
  if (!run.call_func) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t ret = run.call_func(run, fn, i, cb_ctx, 0, 0, 0);
    if (run.fault != vm::Fault::kNone || run.exit_now) return 0;
    if (ret) return i + 1;
  }
  return n;
}

}  // namespace

void add_loop_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_loop, "bpf_loop", loop);
}

}  // namespace knod::xdp
