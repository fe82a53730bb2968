// CLOCK_MONOTONIC in ns for bpf_ktime_get_ns and bpf_jiffies64, read the way the kernel's
// ktime_get_mono_fast_ns reads it (kernel/time/timekeeping.c): the clocksource counter (the
// TSC) scaled from the last anchor, instead of a clock_gettime() per call (a vDSO call that
// costs ~25 ns under KVM's pvclock against ~10 ns for rdtsc).
#pragma once

#include <cstdint>

namespace knod::xdp {

/// Nanoseconds of CLOCK_MONOTONIC. Per thread: an anchor (TSC, clock_gettime) renewed every
/// ~1 ms, the TSC rate measured since the thread's first anchor; between anchors the value is
/// extrapolated from the TSC (error: the rate's over at most 1 ms, tens of ns). Never
/// decreases on a thread; threads agree to within that error. Where the TSC is not invariant (CPUID
/// 0x80000007 EDX bit 8), or during a thread's first ~1 ms (no rate yet), every call is a
/// clock_gettime.
uint64_t mono_ns();

/// clock_gettime(CLOCK_MONOTONIC) in ns (the reference mono_ns follows).
uint64_t mono_ns_exact();

}  // namespace knod::xdp
