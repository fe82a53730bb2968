// Time, randomness and CPU helpers: bpf_ktime_get_ns (5), bpf_get_prandom_u32 (7),
// bpf_get_smp_processor_id (8), bpf_jiffies64 (118), bpf_ktime_get_boot_ns (125),
// bpf_ktime_get_coarse_ns (160), bpf_ktime_get_tai_ns (208). Source: kernel/bpf/helpers.c.
// With a pinned clock (Run::clock_ns, e.g. the packet's capture time, or Env::clock_ns) every
// clock reads that value, so runs repeat.
#include <time.h>

#include "xdp/helpers.h"
#include "xdp/mono_clock.h"

namespace knod::xdp {

/// CONFIG_HZ of the jiffies that bpf_jiffies64 and syncookies count (Debian kernels: 250).
constexpr uint64_t kHz = 250;

uint64_t clock_ns(const vm::Run& run, int clk) {
  if (run.clock_ns) return run.clock_ns;
  if (run.env && run.env->clock_ns) return run.env->clock_ns;
  if (clk == CLOCK_MONOTONIC) return mono_ns();  // TSC-scaled, as ktime_get_mono_fast_ns
  timespec ts{};
  clock_gettime(clk, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

namespace {

uint64_t ktime_get_ns(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(run, CLOCK_MONOTONIC);
}
uint64_t ktime_get_boot_ns(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(run, CLOCK_BOOTTIME);
}
uint64_t ktime_get_coarse_ns(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(run, CLOCK_MONOTONIC_COARSE);
}
uint64_t ktime_get_tai_ns(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(run, CLOCK_TAI);
}
// jiffies since boot at kHz (the kernel's INITIAL_JIFFIES offset is not reproduced).
uint64_t jiffies64(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(run, CLOCK_MONOTONIC) / (1'000'000'000ull / kHz);
}

// A seeded generator (splitmix64) in Run::prng; the kernel uses a per-CPU
// prandom_u32_state, so values are random in both, equal in neither.
uint64_t get_prandom_u32(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  uint64_t z = (run.prng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}

uint64_t get_smp_processor_id(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return run.cpu;
}

}  // namespace

void add_time_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_ktime_get_ns, "bpf_ktime_get_ns", ktime_get_ns);
  set_helper(t, BPF_FUNC_get_prandom_u32, "bpf_get_prandom_u32", get_prandom_u32);
  set_helper(t, BPF_FUNC_get_smp_processor_id, "bpf_get_smp_processor_id", get_smp_processor_id);
  set_helper(t, BPF_FUNC_jiffies64, "bpf_jiffies64", jiffies64);
  set_helper(t, BPF_FUNC_ktime_get_boot_ns, "bpf_ktime_get_boot_ns", ktime_get_boot_ns);
  set_helper(t, BPF_FUNC_ktime_get_coarse_ns, "bpf_ktime_get_coarse_ns", ktime_get_coarse_ns);
  set_helper(t, BPF_FUNC_ktime_get_tai_ns, "bpf_ktime_get_tai_ns", ktime_get_tai_ns);
}

}  // namespace knod::xdp
