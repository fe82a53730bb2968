// IPv4/IPv6 reassembly (xfrm/reasm.h): the datagram comes back byte for byte whatever the
// fragments' order; duplicates are dropped alone, overlaps drop the whole datagram (RFC
// 5722), incomplete datagrams time out on the caller's clock, the limits drop and count.
// Fragments are cut here by hand (RFC 791 §3.2 / RFC 8200 §4.5 layouts), not by knod.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "xfrm/reasm.h"

namespace knod::xfrm {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint64_t kSec = 1'000'000'000;

void put16(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 8), p[1] = uint8_t(v);
}

/// The IPv4 header of the RFC 1071 worked example found in many texts: 192.168.0.1 ->
/// 192.168.0.199, UDP, total length 0x73 (115), DF, checksum 0xb861. With `df` false the
/// DF bit is cleared and the checksum is 0xf861 (0xb861 + 0x4000, one's complement).
Bytes ipv4_datagram(bool df = true, uint16_t id = 0, uint8_t tos = 0) {
  Bytes p = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
             0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  if (!df) p[6] = 0, p[10] = 0xf8;
  if (id || tos) {  // keep the checksum right: one's-complement update (RFC 1624)
    uint32_t sum = uint16_t(~(p[10] << 8 | p[11]));
    sum += id + tos;  // tos is the low byte of the first 16-bit word
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    put16(&p[4], id), p[1] = tos, put16(&p[10], uint16_t(~sum));
  }
  for (int i = 0; i < 95; ++i) p.push_back(uint8_t(i * 3 + 1));
  return p;
}

/// IPv4 fragment of `d` (20-byte header) with payload bytes [off, off + n), MF as given.
Bytes frag4(const Bytes& d, uint32_t off, uint32_t n, bool mf) {
  Bytes f(20 + n);
  std::memcpy(f.data(), d.data(), 20);
  std::memcpy(f.data() + 20, d.data() + 20 + off, n);
  put16(&f[2], 20 + n);
  put16(&f[6], (d[6] & 0x40) << 8 | (mf ? 0x2000 : 0) | off / 8);
  return f;  // (header checksum left stale: the IP layer checks it before reassembly)
}

/// IPv6 2001:db8::1 -> 2001:db8::2 with a hop-by-hop header (8 bytes, PadN) then UDP: 40 +
/// 8 + 100 bytes, payload length 108.
Bytes ipv6_datagram(uint8_t tclass = 0) {
  Bytes p(40, 0);
  p[0] = uint8_t(0x60 | tclass >> 4), p[1] = uint8_t(tclass << 4);
  put16(&p[4], 108), p[6] = 0 /* hop-by-hop */, p[7] = 64;
  p[8] = 0x20, p[9] = 0x01, p[10] = 0x0d, p[11] = 0xb8, p[23] = 1;
  p[24] = 0x20, p[25] = 0x01, p[26] = 0x0d, p[27] = 0xb8, p[39] = 2;
  Bytes hbh = {17, 0, 1, 4, 0, 0, 0, 0};  // next: UDP; PadN of 4
  p.insert(p.end(), hbh.begin(), hbh.end());
  for (int i = 0; i < 100; ++i) p.push_back(uint8_t(0xa0 ^ i));
  return p;
}

/// IPv6 fragment of `d`: its 48-byte unfragmentable part, a Fragment header (Identification
/// `id`), fragmentable bytes [off, off + n).
Bytes frag6(const Bytes& d, uint32_t off, uint32_t n, bool m, uint32_t id = 0x12345678) {
  Bytes f(56 + n);
  std::memcpy(f.data(), d.data(), 48);
  f[40] = 44;  // hop-by-hop's Next Header now names the Fragment header
  f[48] = d[40];
  put16(&f[50], off | (m ? 1 : 0));
  f[52] = uint8_t(id >> 24), f[53] = uint8_t(id >> 16), f[54] = uint8_t(id >> 8),
  f[55] = uint8_t(id);
  std::memcpy(f.data() + 56, d.data() + 48 + off, n);
  put16(&f[4], uint32_t(f.size() - 40));
  return f;
}

struct Harness {
  Reassembler r;
  Bytes out = Bytes(kReasmMaxLen);
  uint32_t out_len = 0;
  explicit Harness(ReasmLimits l = {}) : r(l) {}
  ReasmResult push(const Bytes& f, uint64_t t = 0) {
    return r.push(f.data(), uint32_t(f.size()), t, out.data(), uint32_t(out.size()), out_len);
  }
  Bytes got() const { return Bytes(out.begin(), out.begin() + out_len); }
};

void expect_conserved(const ReasmStats& s, uint64_t held) {
  EXPECT_EQ(s.reqds, s.frags_done + s.frags_failed + s.frags_expired + held);
}

TEST(Reasm, Ipv4InOrderGivesTheOriginalDatagram) {
  Bytes d = ipv4_datagram();
  ASSERT_EQ(d.size(), 115u);
  Harness h;
  EXPECT_EQ(h.push(frag4(d, 0, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 32, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.r.queues(), 1u);
  EXPECT_EQ(h.r.bytes(), 64u);
  EXPECT_EQ(h.push(frag4(d, 64, 31, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), d);  // DF kept (every fragment had it), total length 115, checksum 0xb861
  const ReasmStats& s = h.r.stats(4);
  EXPECT_EQ(s.reqds, 3u);
  EXPECT_EQ(s.oks, 1u);
  EXPECT_EQ(s.fails, 0u);
  EXPECT_EQ(s.frags_done, 3u);
  EXPECT_EQ(h.r.queues(), 0u);
  EXPECT_EQ(h.r.bytes(), 0u);
  EXPECT_EQ(h.r.stats(6).reqds, 0u);
}

TEST(Reasm, Ipv4ReverseAndShuffledOrder) {
  Bytes d = ipv4_datagram(false);
  EXPECT_EQ(d[10], 0xf8);
  std::vector<Bytes> fr = {frag4(d, 0, 24, true), frag4(d, 24, 24, true), frag4(d, 48, 24, true),
                           frag4(d, 72, 23, false)};
  for (auto order :
       {std::vector<int>{3, 2, 1, 0}, std::vector<int>{2, 0, 3, 1}, std::vector<int>{1, 3, 0, 2}}) {
    Harness h;
    for (size_t i = 0; i < order.size(); ++i)
      EXPECT_EQ(h.push(fr[order[i]]),
                i + 1 < order.size() ? ReasmResult::kHeld : ReasmResult::kDone);
    EXPECT_EQ(h.got(), d);  // frag_off 0 (no DF), checksum 0xf861
    EXPECT_EQ(h.r.stats(4).oks, 1u);
  }
}

TEST(Reasm, NotFragmentsPassUntouched) {
  Harness h;
  Bytes d = ipv4_datagram();
  EXPECT_EQ(h.push(d), ReasmResult::kNotFragment);
  Bytes v6 = ipv6_datagram();
  EXPECT_EQ(h.push(v6), ReasmResult::kNotFragment);
  Bytes bad = frag4(d, 0, 32, true);
  put16(&bad[2], 200);  // total length past the captured bytes: the IP layer's drop
  EXPECT_EQ(h.push(bad), ReasmResult::kNotFragment);
  EXPECT_EQ(h.r.stats(4).reqds, 0u);
  EXPECT_EQ(h.r.stats(6).reqds, 0u);
}

TEST(Reasm, DuplicateIsDroppedAloneAndTheDatagramCompletes) {
  Bytes d = ipv4_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag4(d, 0, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 32, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 0, 32, true)), ReasmResult::kDropped);   // exact duplicate
  EXPECT_EQ(h.push(frag4(d, 16, 40, true)), ReasmResult::kDropped);  // inside run [0, 64)
  EXPECT_EQ(h.push(frag4(d, 64, 31, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), d);
  const ReasmStats& s = h.r.stats(4);
  EXPECT_EQ(s.duplicates, 2u);
  EXPECT_EQ(s.fails, 0u);
  EXPECT_EQ(s.oks, 1u);
  EXPECT_EQ(s.reqds, 5u);
  expect_conserved(s, 0);
}

TEST(Reasm, OverlapDropsTheWholeDatagram) {
  Bytes d = ipv4_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag4(d, 0, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 24, 40, true)), ReasmResult::kDropped);  // [24, 64) over [0, 32)
  EXPECT_EQ(h.r.queues(), 0u);
  const ReasmStats& s = h.r.stats(4);
  EXPECT_EQ(s.overlaps, 1u);
  EXPECT_EQ(s.fails, 1u);
  EXPECT_EQ(s.frags_failed, 2u);
  // The rest starts a new datagram that cannot complete (its first bytes were dropped).
  EXPECT_EQ(h.push(frag4(d, 32, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 64, 31, false)), ReasmResult::kHeld);
  EXPECT_EQ(h.r.expire(30 * kSec), 1u);
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_EQ(s.fails, 2u);
  EXPECT_EQ(s.oks, 0u);
  expect_conserved(s, 0);
}

/// Checked against Linux 6.18 (fragments sent over a veth pair into another netns,
/// /proc/net/snmp Ip: counters): in order, [0, 16) [16, 32) form one run, so [8, 24) is a
/// duplicate and [32, 64) completes the datagram (ReasmOKs +1, ReasmFails +0); out of order,
/// [8, 16) then [0, 8) are two runs, so [0, 16) overlaps (ReasmFails +1) and the datagram is
/// gone: [16, 64) starts a new one.
TEST(Reasm, DuplicateOrOverlapDependsOnRunsAsInTheKernel) {
  Bytes d = ipv4_datagram(false);
  Harness in;
  EXPECT_EQ(in.push(frag4(d, 0, 16, true)), ReasmResult::kHeld);
  EXPECT_EQ(in.push(frag4(d, 16, 16, true)), ReasmResult::kHeld);
  EXPECT_EQ(in.push(frag4(d, 8, 16, true)), ReasmResult::kDropped);
  EXPECT_EQ(in.push(frag4(d, 32, 63, false)), ReasmResult::kDone);
  EXPECT_EQ(in.got(), d);
  EXPECT_EQ(in.r.stats(4).duplicates, 1u);
  EXPECT_EQ(in.r.stats(4).fails, 0u);
  Harness out;
  EXPECT_EQ(out.push(frag4(d, 8, 8, true)), ReasmResult::kHeld);
  EXPECT_EQ(out.push(frag4(d, 0, 8, true)), ReasmResult::kHeld);
  EXPECT_EQ(out.push(frag4(d, 0, 16, true)), ReasmResult::kDropped);
  EXPECT_EQ(out.r.stats(4).overlaps, 1u);
  EXPECT_EQ(out.r.stats(4).fails, 1u);
  EXPECT_EQ(out.r.stats(4).duplicates, 0u);
  EXPECT_EQ(out.push(frag4(d, 16, 79, false)), ReasmResult::kHeld);
  EXPECT_EQ(out.r.stats(4).oks, 0u);
}

TEST(Reasm, MissingLastFragmentTimesOutOnTheCallersClock) {
  Bytes d = ipv4_datagram();
  Harness h;
  uint64_t t0 = 1700000000 * kSec;
  EXPECT_EQ(h.push(frag4(d, 0, 32, true), t0), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 32, 32, true), t0 + 29 * kSec), ReasmResult::kHeld);
  EXPECT_EQ(h.r.expire(t0 + 30 * kSec - 1), 0u);  // ipfrag_time: 30 s from the first fragment
  EXPECT_EQ(h.r.queues(), 1u);
  // The last fragment arrives at +30 s: the datagram has expired; it starts a new one.
  EXPECT_EQ(h.push(frag4(d, 64, 31, false), t0 + 30 * kSec), ReasmResult::kHeld);
  const ReasmStats& s = h.r.stats(4);
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_EQ(s.fails, 1u);
  EXPECT_EQ(s.frags_expired, 2u);
  EXPECT_EQ(h.r.expire_all(), 1u);
  EXPECT_EQ(s.timeouts, 2u);
  EXPECT_EQ(s.flushed, 1u);
  EXPECT_EQ(s.oks, 0u);
  expect_conserved(s, 0);
}

TEST(Reasm, KeyIncludesIdentificationAndProtocol) {
  Bytes a = ipv4_datagram(false, 7), b = ipv4_datagram(false, 8);
  Harness h;
  EXPECT_EQ(h.push(frag4(a, 0, 64, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(b, 0, 64, true)), ReasmResult::kHeld);
  Bytes other = frag4(a, 64, 31, false);
  other[9] = 50;  // ESP: another datagram (the IPv4 key holds the protocol)
  EXPECT_EQ(h.push(other), ReasmResult::kHeld);
  EXPECT_EQ(h.r.queues(), 3u);
  EXPECT_EQ(h.push(frag4(b, 64, 31, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), b);
  EXPECT_EQ(h.push(frag4(a, 64, 31, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), a);
}

TEST(Reasm, InconsistentEndsDropTheDatagram) {
  Bytes d = ipv4_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag4(d, 64, 31, false)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 64, 24, false)), ReasmResult::kDropped);  // another end
  EXPECT_EQ(h.r.stats(4).fails, 1u);
  EXPECT_EQ(h.push(frag4(d, 64, 31, false)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(d, 88, 16, true)), ReasmResult::kDropped);  // data past the end
  EXPECT_EQ(h.r.stats(4).fails, 2u);
  EXPECT_EQ(h.r.queues(), 0u);
}

TEST(Reasm, EcnOfFragmentsCombinesAsRfc3168) {
  // ECT(0) and CE -> CE on the datagram (tos 0x02 | 0x03).
  Bytes ect = ipv4_datagram(true, 0, 0x02), ce = ipv4_datagram(true, 0, 0x03);
  Harness h;
  EXPECT_EQ(h.push(frag4(ect, 0, 64, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(ce, 64, 31, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), ce);  // tos 0x03, checksum recomputed
  // Not-ECT mixed with CE: dropped (ip_frag_ecn_table 0xff).
  Bytes plain = ipv4_datagram();
  EXPECT_EQ(h.push(frag4(plain, 0, 64, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(ce, 64, 31, false)), ReasmResult::kDropped);
  EXPECT_EQ(h.r.stats(4).fails, 1u);
  EXPECT_EQ(h.r.stats(4).frags_failed, 2u);
}

TEST(Reasm, Ipv6FragmentHeaderRemoved) {
  Bytes d = ipv6_datagram();
  ASSERT_EQ(d.size(), 148u);
  std::vector<Bytes> fr = {frag6(d, 0, 48, true), frag6(d, 48, 32, true), frag6(d, 80, 20, false)};
  for (auto order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 1, 0}}) {
    Harness h;
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(h.push(fr[order[i]]), i < 2 ? ReasmResult::kHeld : ReasmResult::kDone);
    EXPECT_EQ(h.got(), d);  // payload length 108, hop-by-hop Next Header 17 again
    EXPECT_EQ(h.r.stats(6).oks, 1u);
    EXPECT_EQ(h.r.stats(6).reqds, 3u);
    EXPECT_EQ(h.r.stats(4).reqds, 0u);
  }
}

TEST(Reasm, Ipv6TimeoutIs60Seconds) {
  Bytes d = ipv6_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag6(d, 0, 48, true), 5 * kSec), ReasmResult::kHeld);
  EXPECT_EQ(h.r.expire(64 * kSec), 0u);
  EXPECT_EQ(h.r.expire(65 * kSec), 1u);
  EXPECT_EQ(h.r.stats(6).timeouts, 1u);
  EXPECT_EQ(h.r.stats(6).fails, 1u);
}

TEST(Reasm, Ipv6OverlapAndDuplicate) {
  Bytes d = ipv6_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag6(d, 0, 48, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag6(d, 0, 48, true)), ReasmResult::kDropped);
  EXPECT_EQ(h.r.stats(6).duplicates, 1u);
  EXPECT_EQ(h.push(frag6(d, 40, 40, true)), ReasmResult::kDropped);  // RFC 5722
  EXPECT_EQ(h.r.stats(6).overlaps, 1u);
  EXPECT_EQ(h.r.stats(6).fails, 1u);
  EXPECT_EQ(h.r.queues(), 0u);
  expect_conserved(h.r.stats(6), 0);
}

TEST(Reasm, Ipv6HeaderErrorsAndAtomicFragment) {
  Bytes d = ipv6_datagram();
  Harness h;
  EXPECT_EQ(h.push(frag6(d, 0, 44, true)), ReasmResult::kDropped);  // M set, 44 not 8k
  EXPECT_EQ(h.r.stats(6).hdr_errors, 1u);
  EXPECT_EQ(h.r.queues(), 0u);
  // Atomic fragment (offset 0, M 0; RFC 6946): the datagram alone, Fragment header removed.
  EXPECT_EQ(h.push(frag6(d, 0, 100, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), d);
  EXPECT_EQ(h.r.stats(6).oks, 1u);
  EXPECT_EQ(h.r.stats(6).reqds, 2u);
  expect_conserved(h.r.stats(6), 0);
}

TEST(Reasm, QueueLimitDropsAndCounts) {
  ReasmLimits l;
  l.max_queues = 2;
  Harness h(l);
  Bytes a = ipv4_datagram(false, 1), b = ipv4_datagram(false, 2), c = ipv4_datagram(false, 3);
  EXPECT_EQ(h.push(frag4(a, 0, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(b, 0, 32, true)), ReasmResult::kHeld);
  EXPECT_EQ(h.push(frag4(c, 0, 32, true)), ReasmResult::kDropped);
  EXPECT_EQ(h.r.stats(4).over_limit, 1u);
  EXPECT_EQ(h.r.stats(4).fails, 1u);
  // Fragments of datagrams already queued still go in.
  EXPECT_EQ(h.push(frag4(a, 32, 63, false)), ReasmResult::kDone);
  EXPECT_EQ(h.got(), a);
  expect_conserved(h.r.stats(4), 1);
}

TEST(Reasm, ByteLimitDropsWhileAbove) {
  ReasmLimits l;
  l.high_thresh = 40;  // bytes of fragment data
  Harness h(l);
  Bytes a = ipv4_datagram(false, 1);
  EXPECT_EQ(h.push(frag4(a, 0, 32, true)), ReasmResult::kHeld);   // 32 held: not above
  EXPECT_EQ(h.push(frag4(a, 32, 32, true)), ReasmResult::kHeld);  // 64 held
  EXPECT_EQ(h.push(frag4(a, 64, 31, false)), ReasmResult::kDropped);
  EXPECT_EQ(h.r.stats(4).over_limit, 1u);
  EXPECT_EQ(h.r.bytes(), 64u);
  EXPECT_EQ(h.r.expire_all(), 1u);
  EXPECT_EQ(h.r.bytes(), 0u);
  expect_conserved(h.r.stats(4), 0);
}

/// Random fragments (offsets, lengths, flags, a few identifications, both families, cut
/// short): never a crash, and every fragment is accounted for once all queues expire.
TEST(Reasm, RandomFragmentsAreAllAccountedFor) {
  Bytes d4 = ipv4_datagram(false), d6 = ipv6_datagram();
  Harness h;
  uint32_t x = 12345;
  auto rnd = [&x](uint32_t n) {
    x = x * 1103515245 + 12345;
    return (x >> 8) % n;
  };
  uint64_t done = 0;
  for (int i = 0; i < 5000; ++i) {
    bool v6 = rnd(2);
    uint32_t off = rnd(v6 ? 13 : 12) * 8, n = 1 + rnd(v6 ? 100 - off : 95 - off);
    Bytes f = v6 ? frag6(d6, off, n, rnd(4) != 0, rnd(3)) : frag4(d4, off, n, rnd(4) != 0);
    if (!v6) put16(&f[4], rnd(3));
    if (rnd(20) == 0) f.resize(rnd(uint32_t(f.size())));  // cut short
    if (h.push(f, uint64_t(i) * kSec / 100) == ReasmResult::kDone) {
      ++done;
      EXPECT_LE(h.out_len, v6 ? 148u : 115u);
    }
  }
  h.r.expire_all();
  EXPECT_EQ(h.r.queues(), 0u);
  EXPECT_EQ(h.r.bytes(), 0u);
  EXPECT_EQ(h.r.stats(4).oks + h.r.stats(6).oks, done);
  EXPECT_GT(done, 0u);
  EXPECT_GT(h.r.stats(4).overlaps + h.r.stats(6).overlaps, 0u);
  expect_conserved(h.r.stats(4), 0);
  expect_conserved(h.r.stats(6), 0);
}

TEST(Reasm, OutputTooSmallIsAFail) {
  Bytes d = ipv4_datagram();
  Reassembler r;
  Bytes out(100);
  uint32_t n = 0;
  Bytes f0 = frag4(d, 0, 64, true), f1 = frag4(d, 64, 31, false);
  EXPECT_EQ(r.push(f0.data(), uint32_t(f0.size()), 0, out.data(), 100, n), ReasmResult::kHeld);
  EXPECT_EQ(r.push(f1.data(), uint32_t(f1.size()), 0, out.data(), 100, n), ReasmResult::kDropped);
  EXPECT_EQ(r.stats(4).fails, 1u);
  EXPECT_EQ(r.stats(4).frags_failed, 2u);
}

}  // namespace
}  // namespace knod::xfrm
