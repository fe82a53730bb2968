// device/gpu/batcher.h: a batch is flushed when it reaches N packets or T ns after its first
// packet, with a fake clock.
#include <gtest/gtest.h>

#include <limits>

#include "base/error.h"
#include "device/gpu/batcher.h"

namespace knod::device::gpu {
namespace {

using Flush = Batcher::Flush;

TEST(Batcher, FlushesOnSize) {
  uint64_t now = 1000;
  Batcher b(3, 0, [&] { return now; });  // no timeout
  EXPECT_EQ(b.add(), Flush::kNone);
  EXPECT_EQ(b.add(), Flush::kNone);
  now += 1'000'000'000;
  EXPECT_EQ(b.poll(), Flush::kNone);  // no timeout set
  EXPECT_EQ(b.add(), Flush::kSize);
  EXPECT_EQ(b.take(Flush::kSize), 3u);
  EXPECT_EQ(b.pending(), 0u);
  EXPECT_EQ(b.flushed_by_size(), 1u);
  EXPECT_EQ(b.flushed_by_timeout(), 0u);
}

TEST(Batcher, FlushesOnTimeoutFromFirstPacket) {
  uint64_t now = 5'000;
  Batcher b(64, 100'000, [&] { return now; });
  EXPECT_EQ(b.poll(), Flush::kNone);  // empty: never due
  EXPECT_EQ(b.remaining_ns(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(b.add(), Flush::kNone);
  EXPECT_EQ(b.first_ns(), 5'000u);
  now += 60'000;
  EXPECT_EQ(b.add(), Flush::kNone);  // a later packet does not restart the timeout
  EXPECT_EQ(b.remaining_ns(), 40'000u);
  now += 39'999;
  EXPECT_EQ(b.poll(), Flush::kNone);
  EXPECT_EQ(b.remaining_ns(), 1u);
  now += 1;
  EXPECT_EQ(b.poll(), Flush::kTimeout);
  EXPECT_EQ(b.remaining_ns(), 0u);
  EXPECT_EQ(b.take(Flush::kTimeout), 2u);
  EXPECT_EQ(b.flushed_by_timeout(), 1u);
  // The next batch's timeout starts at its own first packet.
  now += 1'000'000;
  EXPECT_EQ(b.poll(), Flush::kNone);
  EXPECT_EQ(b.add(), Flush::kNone);
  EXPECT_EQ(b.remaining_ns(), 100'000u);
}

TEST(Batcher, SizeBeforeTimeoutAndFinalFlush) {
  uint64_t now = 0;
  Batcher b(2, 10, [&] { return now; });
  EXPECT_EQ(b.add(), Flush::kNone);
  EXPECT_EQ(b.add(), Flush::kSize);
  EXPECT_EQ(b.take(Flush::kSize), 2u);
  EXPECT_EQ(b.add(), Flush::kNone);
  EXPECT_EQ(b.take(Flush::kNone), 1u);     // end of input: not counted as size or timeout
  EXPECT_EQ(b.take(Flush::kTimeout), 0u);  // nothing pending: not counted
  EXPECT_EQ(b.flushed_by_size(), 1u);
  EXPECT_EQ(b.flushed_by_timeout(), 0u);
}

TEST(Batcher, ZeroSizeIsAnError) {
  EXPECT_THROW(Batcher(0, 0), Error);
}

}  // namespace
}  // namespace knod::device::gpu
