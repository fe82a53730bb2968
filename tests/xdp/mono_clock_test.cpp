// mono_ns() against clock_gettime(CLOCK_MONOTONIC): every value lies between the system clock
// reads around it, values never decrease, and once calibrated it reads the system clock only
// about once per kAnchorNs.
#include "xdp/mono_clock.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace knod::xdp {
namespace {

// Error allowed against the system clock (ns): half an anchor read (at most twice the quickest
// read plus 512 cycles, ~300 ns at 1 GHz) plus the ratio's error over kAnchorNs. A ratio 2% off
// is 1000 ns off at the end of an anchor; a wrong unit, microseconds or more.
constexpr uint64_t kTolNs = 500;

void check_bracketed(uint64_t run_ns) {
  const uint64_t end = mono_ns_slow() + run_ns;
  uint64_t prev = 0, n = 0, worst = 0;
  for (uint64_t before = mono_ns_slow(); before < end; ++n) {
    const uint64_t v = mono_ns();
    const uint64_t after = mono_ns_slow();
    ASSERT_GE(v, prev) << "went back after " << n << " reads";
    ASSERT_GE(v + kTolNs, before) << "read " << n;
    ASSERT_LE(v, after + kTolNs) << "read " << n;
    worst = std::max(worst, v > after ? v - after : before > v ? before - v : 0);
    prev = v;
    before = after;
  }
  ::testing::Test::RecordProperty("reads", std::to_string(n));
  ::testing::Test::RecordProperty("worst_outside_ns", std::to_string(worst));
}

TEST(MonoClock, WithinTheSystemClockReadsAroundIt) {
  // Long enough to calibrate (kCalibrateNs) and then run on the TSC for a while.
  check_bracketed(3 * kCalibrateNs);
}

TEST(MonoClock, WithinTheSystemClockOnOtherThreads) {
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) ts.emplace_back([] { check_bracketed(2 * kCalibrateNs); });
  for (auto& t : ts) t.join();
}

TEST(MonoClock, CalibratedReadsUseTheTsc) {
  if (!mono_ns_uses_tsc()) GTEST_SKIP() << "no invariant TSC: mono_ns() is clock_gettime";
  const uint64_t start = mono_ns_slow();
  while (mono_ns_slow() - start < 2 * kCalibrateNs) (void)mono_ns();  // calibrate
  const uint64_t reads0 = mono_ns_slow_reads(), t0 = mono_ns_slow();
  uint64_t calls = 0, sink = 0;
  for (; calls < 200'000; ++calls) sink += mono_ns();
  const uint64_t elapsed = mono_ns_slow() - t0, reads = mono_ns_slow_reads() - reads0;
  EXPECT_NE(sink, 0u);
  // One anchor per kAnchorNs of elapsed time (plus slack for a descheduled thread), not one
  // system clock read per call.
  EXPECT_LE(reads, elapsed / kAnchorNs + 20) << calls << " calls in " << elapsed << " ns";
  EXPECT_LT(reads * 100, calls);
}

}  // namespace
}  // namespace knod::xdp
