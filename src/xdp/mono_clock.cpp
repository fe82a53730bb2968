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

#if defined(__x86_64__)
bool invariant_tsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return false;
  __get_cpuid(0x80000007, &a, &b, &c, &d);
  return (d >> 8) & 1;  // "TscInvariant" (AMD APM vol. 3, Intel SDM: invariant TSC)
}

struct Anchor {
  uint64_t tsc = 0, ns = 0;  ///< a TSC reading and the clock_gettime taken with it
  uint64_t mult = 0;         ///< ns per tick << 32; 0: not measured yet
  uint64_t limit = 0;        ///< ticks after `tsc` at which the anchor is renewed
  uint64_t last = 0;         ///< the last value returned (never decrease)
};
thread_local Anchor anchor;

// A new anchor: the rate over the interval since the previous one (>= kAnchorNs), so it
// follows whatever the host's clock adjustment does to CLOCK_MONOTONIC.
uint64_t renew(Anchor& s) {
  const uint64_t ns = mono_ns_exact();
  const uint64_t tsc = __rdtsc();
  if (s.tsc && tsc > s.tsc && ns >= s.ns + kAnchorNs)
    s.mult = uint64_t((static_cast<unsigned __int128>(ns - s.ns) << 32) / (tsc - s.tsc));
  if (!s.tsc || s.mult) {  // before the first rate, keep the first anchor to measure over
    s.tsc = tsc;
    s.ns = ns;
  }
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
