// CLOCK_MONOTONIC in ns, read per packet by bpf_ktime_get_ns and bpf_jiffies64 (the kernel's
// ktime_get_mono_fast_ns: the last timekeeping tick plus the cycle counter since, scaled).
// clock_gettime costs ~23 ns under a hypervisor (about a third of a small XDP program's
// run); reading the TSC costs ~10 ns. So each thread keeps an anchor (a clock_gettime value
// and the TSC at that moment) and, for at most kAnchorNs after it, returns the anchor plus the
// TSC cycles since, scaled by a cycles-to-ns ratio that this thread measured between its first
// anchor and its latest one (at least kCalibrateNs apart). Past kAnchorNs, or before the ratio
// is known, or where the TSC is not invariant (CPUID 0x80000007 EDX bit 8) or not x86-64, it
// calls clock_gettime (and re-anchors). Values never decrease on one thread.
// Error against clock_gettime: the ratio's error over at most kAnchorNs (with a ratio measured
// over >= 10 ms with ~20 ns jitter, 2 ppm of 50 us = 0.1 ns), plus the anchor read's own ~20 ns.
#pragma once

#include <cstdint>

namespace knod::xdp {

/// Longest extrapolation from one clock_gettime anchor (ns).
constexpr uint64_t kAnchorNs = 50'000;
/// Shortest interval between the anchors that give the cycles-to-ns ratio (ns).
constexpr uint64_t kCalibrateNs = 10'000'000;

/// clock_gettime(CLOCK_MONOTONIC) in ns, via the TSC between anchors (see above).
uint64_t mono_ns();
/// clock_gettime(CLOCK_MONOTONIC) in ns, always a system clock read (the reference).
uint64_t mono_ns_slow();
/// clock_gettime reads mono_ns() made on this thread (anchors and fallbacks).
uint64_t mono_ns_slow_reads();
/// Whether mono_ns() may use the TSC on this machine (x86-64 with an invariant TSC).
bool mono_ns_uses_tsc();

}  // namespace knod::xdp
