// The TSC-extrapolated CLOCK_MONOTONIC of xdp/mono_clock.h.
#include "xdp/mono_clock.h"

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace knod::xdp {
namespace {

constexpr uint64_t kAnchorNs = 1'000'000;  ///< renew the anchor (and the rate) every 1 ms
/// Most TSC ticks between the two reads around an anchor's clock_gettime (~20-100 us at
/// 1-5 GHz; a clock_gettime takes < 1 us when the thread keeps its CPU).
constexpr uint64_t kBracketTicks = 100'000;

#if defined(__x86_64__)
bool invariant_tsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return false;
  __get_cpuid(0x80000007, &a, &b, &c, &d);
  return (d >> 8) & 1;  // "TscInvariant" (AMD APM vol. 3, Intel SDM: invariant TSC)
}

struct Anchor {
  uint64_t origin_tsc = 0, origin_ns = 0;  ///< the thread's first anchor (rate baseline)
  uint64_t tsc = 0, ns = 0;                ///< a TSC reading and the clock_gettime taken with it
  uint64_t mult = 0;                       ///< ns per tick << 32; 0: not measured yet
  uint64_t limit = 0;                      ///< ticks after `tsc` at which the anchor is renewed
  uint64_t last = 0;                       ///< the last value returned (never decrease)
};
thread_local Anchor anchor;

// A new anchor: clock_gettime bracketed by two TSC reads, taken again when they lie more
// than kBracketTicks apart (the thread was preempted or the vCPU paused in between: the pair
// would put the clock behind by the pause), paired with their midpoint. The rate is measured
// from the thread's first anchor, so one anchor's error fades as the interval grows; the
// renewal every kAnchorNs keeps CLOCK_MONOTONIC's own slewing (<= 500 ppm) below 1 us.
uint64_t renew(Anchor& s) {
  uint64_t ns = 0, tsc = 0;
  for (int tries = 0; tries < 4; ++tries) {
    const uint64_t t0 = __rdtsc();
    ns = mono_ns_exact();
    const uint64_t t1 = __rdtsc();
    tsc = t0 + (t1 - t0) / 2;
    if (t1 - t0 <= kBracketTicks) break;
  }
  if (!s.origin_tsc) {
    s.origin_tsc = tsc;
    s.origin_ns = ns;
  } else if (tsc > s.origin_tsc && ns >= s.origin_ns + kAnchorNs) {
    s.mult =
        uint64_t((static_cast<unsigned __int128>(ns - s.origin_ns) << 32) / (tsc - s.origin_tsc));
  }
  s.tsc = tsc;
  s.ns = ns;
  s.limit = s.mult ? uint64_t((static_cast<unsigned __int128>(kAnchorNs) << 32) / s.mult) : 0;
  return ns;
}
#endif

}  // namespace

uint64_t mono_ns_exact() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t mono_ns() {
#if defined(__x86_64__)
  static const bool tsc_ok = invariant_tsc();
  if (!tsc_ok) return mono_ns_exact();
  Anchor& s = anchor;
  const uint64_t d = __rdtsc() - s.tsc;
  uint64_t v =
      d < s.limit ? s.ns + uint64_t((static_cast<unsigned __int128>(d) * s.mult) >> 32) : renew(s);
  if (v < s.last) v = s.last;
  s.last = v;
  return v;
#else
  return mono_ns_exact();
#endif
}

}  // namespace knod::xdp
