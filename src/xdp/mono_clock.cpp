// CLOCK_MONOTONIC between clock_gettime anchors by the TSC (see mono_clock.h).
#include "xdp/mono_clock.h"

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace knod::xdp {
namespace {

/// One thread's anchors. `mult` is ns per TSC cycle in 32.32 fixed point, 0 until measured.
struct Anchor {
  uint64_t tsc = 0, ns = 0;    ///< the latest anchor
  uint64_t tsc0 = 0, ns0 = 0;  ///< the first anchor: the ratio is measured from here
  uint64_t mult = 0;
  uint64_t limit = 0;  ///< TSC cycles in kAnchorNs
  uint64_t last = 0;   ///< the last value returned (values never decrease)
  uint64_t slow_reads = 0;
  uint64_t quickest = 0;  ///< TSC cycles of the quickest anchor read so far
};
/// Cycles an anchor read may take beyond twice the quickest (~200 ns at 2.5 GHz).
constexpr uint64_t kSlackCycles = 512;
thread_local Anchor t_anchor;

[[maybe_unused]] bool invariant_tsc() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return false;
  __get_cpuid(0x80000007, &a, &b, &c, &d);
  return (d >> 8) & 1;  // "Invariant TSC": constant rate in every P-, C- and T-state
#else
  return false;
#endif
}

#if defined(__x86_64__)
/// A clock_gettime read, taken as the anchor for the TSC midway between the two reads around
/// it; once the first anchor is kCalibrateNs old, the ratio from it to this one. A read that
/// took much longer than the quickest one seen (the thread was interrupted between the TSC
/// reads) is tried again, at most kTries times, and not used as an anchor if all were slow.
[[gnu::noinline]] uint64_t reanchor(Anchor& a) {
  constexpr int kTries = 4;
  uint64_t c = 0, ns = 0;
  bool good = false;
  for (int t = 0; t < kTries && !good; ++t) {
    const uint64_t c1 = __rdtsc();
    ns = mono_ns_slow();
    const uint64_t c2 = __rdtsc();
    ++a.slow_reads;
    if (c2 < c1) continue;  // the TSC went back (a migration between the reads)
    const uint64_t took = c2 - c1;
    if (!a.quickest || took < a.quickest) a.quickest = took;
    good = took <= 2 * a.quickest + kSlackCycles;
    c = c1 + took / 2;
  }
  if (ns > a.last) a.last = ns;
  if (!good) return a.last;    // keep the previous anchor
  if (a.ns0 && c <= a.tsc0) {  // the TSC went back: measure the ratio again from here
    a.ns0 = 0;
    a.mult = 0;
  }
  if (!a.ns0) {
    a.ns0 = ns;
    a.tsc0 = c;
  } else if (ns - a.ns0 >= kCalibrateNs) {
    const unsigned __int128 dns = ns - a.ns0, dc = c - a.tsc0;
    a.mult = uint64_t((dns << 32) / dc);
    a.limit = uint64_t(dc * kAnchorNs / dns);
  }
  a.tsc = c;
  a.ns = ns;
  return a.last;
}
#endif

}  // namespace

uint64_t mono_ns_slow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

bool mono_ns_uses_tsc() {
  static const bool ok = invariant_tsc();
  return ok;
}

uint64_t mono_ns() {
#if defined(__x86_64__)
  if (mono_ns_uses_tsc()) {
    Anchor& a = t_anchor;
    const uint64_t d = __rdtsc() - a.tsc;
    if (a.mult && d < a.limit) {
      uint64_t v = a.ns + uint64_t((unsigned __int128)d * a.mult >> 32);
      if (v < a.last) v = a.last;
      a.last = v;
      return v;
    }
    return reanchor(a);
  }
#endif
  return mono_ns_slow();
}

uint64_t mono_ns_slow_reads() {
  return t_anchor.slow_reads;
}

}  // namespace knod::xdp
