// Anti-replay: RFC 6479 ring at the window edges, and through whole ESP batches
// (window 0: no check, wrap at 2^32 with ESN, a duplicate inside one batch).
#include <gtest/gtest.h>

#include "util.h"
#include "xfrm/crypto/openssl_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

ReplayCheck check_then_advance(ReplayState& r, uint64_t s) {
  ReplayCheck c = replay_check(r, s);
  if (c == ReplayCheck::kOk) replay_advance(r, s);
  return c;
}

class WindowEdges : public ::testing::TestWithParam<uint32_t> {};

TEST_P(WindowEdges, EdgesOfWindow) {
  uint32_t w = GetParam();
  ReplayState r;
  replay_init(r, w);
  uint64_t top = 10000;
  ASSERT_EQ(check_then_advance(r, top), ReplayCheck::kOk);
  EXPECT_EQ(replay_check(r, top), ReplayCheck::kReplay);
  EXPECT_EQ(replay_check(r, top - w + 1), ReplayCheck::kOk);  // last slot in window
  EXPECT_EQ(replay_check(r, top - w), ReplayCheck::kTooOld);  // first slot outside
  EXPECT_EQ(check_then_advance(r, top - w + 1), ReplayCheck::kOk);
  EXPECT_EQ(replay_check(r, top - w + 1), ReplayCheck::kReplay);
  // Slide by exactly one window: everything old must be forgotten or too old.
  ASSERT_EQ(check_then_advance(r, top + w), ReplayCheck::kOk);
  EXPECT_EQ(replay_check(r, top), ReplayCheck::kTooOld);
  EXPECT_EQ(replay_check(r, top + 1), ReplayCheck::kOk);  // never seen, inside window
  EXPECT_EQ(replay_check(r, top + w - 1), ReplayCheck::kOk);
  // Accept every number of the window once, out of order; all are then replays.
  for (uint64_t s = top + w + 1; s < top + 2 * w; s += 2)
    ASSERT_EQ(check_then_advance(r, s), ReplayCheck::kOk);
  for (uint64_t s = top + w + 2; s < top + 2 * w; s += 2)
    ASSERT_EQ(check_then_advance(r, s), ReplayCheck::kOk);
  for (uint64_t s = top + w + 1; s < top + 2 * w; ++s)
    ASSERT_EQ(replay_check(r, s), ReplayCheck::kReplay) << s;
  // A jump far ahead clears the whole ring.
  ASSERT_EQ(check_then_advance(r, top + 100 * w), ReplayCheck::kOk);
  EXPECT_EQ(replay_check(r, top + 100 * w - 1), ReplayCheck::kOk);
  EXPECT_EQ(replay_check(r, top + 99 * w + 1), ReplayCheck::kOk);
}

INSTANTIATE_TEST_SUITE_P(Sizes, WindowEdges, ::testing::Values(32u, 64u, 100u, 1024u, 4096u));

/// A GCM transport SA pair: `out` encrypts with sequence numbers we pick, `in` decrypts.
struct Pair {
  Sad out_sad, in_sad;
  OpensslEngine eng_out, eng_in;
  explicit Pair(const std::string& extra) {
    std::string line =
        "ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x77 mode transport " + extra +
        " aead 'rfc4106(gcm(aes))' 0x00112233445566778899aabbccddeeff00000001 128";
    out_sad.add(state(line));
    in_sad.add(state(line));
    engine_load(eng_out, out_sad);
    engine_load(eng_in, in_sad);
  }
  /// ESP packets with these full sequence numbers.
  std::vector<Bytes> make(const std::vector<uint64_t>& seqs) {
    std::vector<Bytes> out;
    for (uint64_t s : seqs) {
      out_sad[0].oseq = s - 1;
      TestBatch b({ipv4("10.0.0.1", "10.0.0.2", 17, udp(1, 2, counting(30)))});
      b.sa[0] = 0;
      Counters c;
      esp_encrypt_batch(out_sad, eng_out, b.b, c);
      EXPECT_EQ(b.result(0), Drop::kOk);
      out.push_back(b.packet(0));
    }
    return out;
  }
  std::vector<Drop> receive(const std::vector<Bytes>& pkts) {
    TestBatch b(pkts);
    Counters c;
    esp_decrypt_batch(in_sad, eng_in, b.b, c);
    std::vector<Drop> r;
    for (uint32_t i = 0; i < b.b.count; ++i) r.push_back(b.result(i));
    return r;
  }
};

TEST(XfrmReplay, DuplicateInOneBatchAcceptsOneCopy) {
  Pair p("replay-window 64");
  auto pk = p.make({1, 2, 3});
  auto r = p.receive({pk[0], pk[1], pk[1], pk[2], pk[0]});
  EXPECT_EQ(r, (std::vector<Drop>{Drop::kOk, Drop::kOk, Drop::kReplay, Drop::kOk, Drop::kReplay}));
  EXPECT_EQ(p.in_sad[0].stats.c.packets, 3u);
  EXPECT_EQ(p.in_sad[0].stats.c[Drop::kReplay], 2u);
  EXPECT_EQ(p.receive({pk[2]})[0], Drop::kReplay);  // across batches as well
}

TEST(XfrmReplay, IcvFailureDoesNotMoveWindow) {
  Pair p("replay-window 32");
  auto pk = p.make({1000, 5});
  Bytes bad = pk[0];
  bad[bad.size() - 1] ^= 1;
  EXPECT_EQ(p.receive({bad})[0], Drop::kIntegrity);
  EXPECT_EQ(p.in_sad[0].replay.top, 0u);
  EXPECT_EQ(p.receive({pk[1]})[0], Drop::kOk);  // 5 still fits: the forged 1000 moved nothing
  EXPECT_EQ(p.in_sad[0].stats.c[Drop::kIntegrity], 1u);
}

// replay-window 0 turns anti-replay off: xfrm_replay_check_legacy returns 0 before any test
// and xfrm_replay_advance returns at once, so repeats and old numbers all pass.
TEST(XfrmReplay, WindowZeroChecksNothing) {
  Pair p("replay-window 0");
  auto pk = p.make({1, 2, 3});
  EXPECT_EQ(p.receive({pk[0], pk[2], pk[1], pk[2], pk[0]}), std::vector<Drop>(5, Drop::kOk));
  EXPECT_EQ(p.receive({pk[1]})[0], Drop::kOk);  // across batches as well
  EXPECT_EQ(p.in_sad[0].stats.c.packets, 6u);
  EXPECT_EQ(p.in_sad[0].stats.c[Drop::kReplay], 0u);
  EXPECT_EQ(p.in_sad[0].stats.c[Drop::kTooOld], 0u);
  EXPECT_EQ(p.in_sad[0].replay.top, 0u);  // x->replay.seq stays 0
}

TEST(XfrmReplay, EsnWrapAt2To32) {
  Pair p("replay-window 64 flag esn");
  const uint64_t w = 1ull << 32;
  auto pk = p.make({w - 2, w - 1, w, w + 1, w - 3, w - 70});
  auto r = p.receive({pk[0], pk[1], pk[2], pk[3], pk[4], pk[1], pk[5]});
  // 2^32 - 70 is 71 behind top 2^32 + 1: inference (RFC 4303 A2.2 case B) reads it as
  // (1, 0xffffffba), ahead of the window, so only the ICV can (and does) reject it.
  EXPECT_EQ(r, (std::vector<Drop>{Drop::kOk, Drop::kOk, Drop::kOk, Drop::kOk, Drop::kOk,
                                  Drop::kReplay, Drop::kIntegrity}));
  EXPECT_EQ(p.in_sad[0].replay.top, w + 1);
}

// RFC 4303 A2.2 infers a packet's high bits from the window as the packets before it left
// it, and a packet that fails its ICV leaves it as it was. Within one batch a forged packet
// far ahead (ICV wrong) must not shift the bits of the valid packets after it.
TEST(XfrmReplay, EsnForgedPacketAheadFailsAloneInItsBatch) {
  Pair p("replay-window 32 flag esn");
  auto good = p.make({1, 2, 3, 4});
  Bytes forged = p.make({0x7fffffff})[0];
  forged[forged.size() - 1] ^= 1;
  EXPECT_EQ(p.receive({forged, good[0], good[1], good[2], good[3]}),
            (std::vector<Drop>{Drop::kIntegrity, Drop::kOk, Drop::kOk, Drop::kOk, Drop::kOk}));
  EXPECT_EQ(p.in_sad[0].replay.top, 4u);
  EXPECT_EQ(p.in_sad[0].stats.c.packets, 4u);
  EXPECT_EQ(p.in_sad[0].stats.c[Drop::kIntegrity], 1u);
  // Twice in one batch, between valid packets: each forged packet fails alone.
  auto more = p.make({5, 6, 7});
  EXPECT_EQ(
      p.receive({more[0], forged, more[1], forged, more[2]}),
      (std::vector<Drop>{Drop::kOk, Drop::kIntegrity, Drop::kOk, Drop::kIntegrity, Drop::kOk}));
  EXPECT_EQ(p.in_sad[0].replay.top, 7u);
}

// A valid packet below the window: with top 48 and W 32, low bits 1 read as (1, 1), ahead,
// so its ICV (made with high bits 0) fails, as in the kernel; 49 and 50 after it still pass.
TEST(XfrmReplay, EsnPacketBelowWindowDoesNotShiftTheNext) {
  Pair p("replay-window 32 flag esn");
  p.in_sad[0].replay.top = 48;
  auto pk = p.make({1, 49, 50});
  EXPECT_EQ(p.receive(pk), (std::vector<Drop>{Drop::kIntegrity, Drop::kOk, Drop::kOk}));
  EXPECT_EQ(p.in_sad[0].replay.top, 50u);
}

TEST(XfrmReplay, WithoutEsnSequenceStopsAt2To32) {
  Pair p("replay-window 64");
  p.out_sad[0].oseq = 0xffffffffull;
  TestBatch b({ipv4("10.0.0.1", "10.0.0.2", 17, udp(1, 2, counting(3))),
               ipv4("10.0.0.1", "10.0.0.2", 17, udp(1, 2, counting(4)))});
  b.sa[0] = b.sa[1] = 0;
  Counters c;
  esp_encrypt_batch(p.out_sad, p.eng_out, b.b, c);
  EXPECT_EQ(b.result(0), Drop::kSeqOverflow);
  EXPECT_EQ(b.result(1), Drop::kSeqOverflow);
  EXPECT_EQ(c[Drop::kSeqOverflow], 2u);
  // The kernel's x->replay.oseq stays at 2^32 - 1 (`ip xfrm state` shows seq 0xffffffff).
  EXPECT_EQ(p.out_sad[0].oseq.load(), 0xffffffffull);
}

}  // namespace
}  // namespace knod::xfrm
