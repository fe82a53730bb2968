// Kernel parity: `state add` of an installed SA (EEXIST), `state update` (xfrm_state_update),
// soft/hard lifetimes (xfrm_state_check_expire), the inbound policy check on decrypted packets
// (__xfrm_policy_check), and the /proc/net/xfrm_stat names of the drops.
#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"
#include "util.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/install.h"

namespace knod::xfrm {
namespace {
using namespace test;

const std::string kSa =
    "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x10 reqid 1 mode tunnel "
    "replay-window 32 ";
const std::string kGcm = " aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128";
const std::string kGcm2 =
    " aead 'rfc4106(gcm(aes))' 0xffeeddccbbaa99887766554433221100a0a1a2a3 128";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(XfrmParity, DuplicateStateAddIsFileExists) {
  Sad sad;
  sad.add(state(kSa + kGcm));
  std::string e = error_of([&] { sad.add(state(kSa + kGcm2)); });
  EXPECT_NE(e.find("File exists"), std::string::npos) << e;
  EXPECT_NE(e.find("spi 0x00000010"), std::string::npos) << e;
  EXPECT_EQ(sad.size(), 1u);
  // Same SPI to another destination is another SA (the id is dst, SPI, proto).
  sad.add(state("ip xfrm state add src 192.0.2.1 dst 192.0.2.3 proto esp spi 0x10" + kGcm));
  EXPECT_EQ(sad.size(), 2u);
  // install() names the file line, as `ip -batch` does.
  Sad s2;
  Spd p2;
  XfrmConfig c = parse_text(kSa + kGcm + "\n# again\n" + kSa + kGcm2 + "\n", "dup.conf");
  e = error_of([&] { install(c, s2, p2); });
  EXPECT_EQ(e.rfind("dup.conf:3: xfrm: state add ", 0), 0u) << e;
  EXPECT_NE(e.find("File exists"), std::string::npos) << e;
}

TEST(XfrmParity, StateUpdateTakesLifetimeKeepsKeys) {
  XfrmConfig c = parse_text(kSa + "limit packet-hard 10" + kGcm + "\n" +
                                "ip xfrm state update src 192.0.2.1 dst 192.0.2.2 proto esp spi "
                                "0x10 reqid 1 mode tunnel limit packet-hard 3 limit byte-soft 99" +
                                kGcm2 + "\n",
                            "u.conf");
  ASSERT_EQ(c.state_update.size(), 2u);
  EXPECT_EQ(c.state_update[0], 0);
  EXPECT_EQ(c.state_update[1], 1);
  Sad sad;
  Spd spd;
  install(c, sad, spd);
  ASSERT_EQ(sad.size(), 1u);
  EXPECT_EQ(sad[0].cfg.limits.packet_hard, 3u);
  EXPECT_EQ(sad[0].cfg.limits.byte_soft, 99u);
  EXPECT_EQ(sad[0].cfg.enc_key[0], 0x00);  // xfrm_state_update keeps the algorithms and keys
  EXPECT_EQ(sad[0].cfg.salt[0], 0x10);

  std::string e = error_of([&] {
    Sad s;
    s.update(state("ip xfrm state update src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x11" + kGcm));
  });
  EXPECT_NE(e.find("No such process"), std::string::npos) << e;
  e = error_of([&] { sad.update(state(kSa + kGcm + " encap espinudp 4500 4500 0.0.0.0")); });
  EXPECT_NE(e.find("Invalid argument"), std::string::npos) << e;
}

struct Pair {
  Sad out, in;
  OpensslEngine eo, ei;
  Pair(const std::string& out_line, const std::string& in_line) {
    out.add(state(out_line));
    in.add(state(in_line));
    engine_load(eo, out);
    engine_load(ei, in);
  }
  std::vector<Drop> enc(std::vector<Bytes> pkts, Counters& c, std::vector<Bytes>* res = nullptr) {
    TestBatch b(pkts);
    for (auto& s : b.sa) s = 0;
    esp_encrypt_batch(out, eo, b.b, c);
    std::vector<Drop> r;
    for (uint32_t i = 0; i < b.b.count; ++i) {
      r.push_back(b.result(i));
      if (res) res->push_back(b.packet(i));
    }
    return r;
  }
  std::vector<Drop> dec(std::vector<Bytes> pkts, Counters& c, const Spd* spd = nullptr,
                        std::vector<Bytes>* res = nullptr) {
    TestBatch b(pkts);
    esp_decrypt_batch(in, ei, b.b, c, spd);
    std::vector<Drop> r;
    for (uint32_t i = 0; i < b.b.count; ++i) {
      r.push_back(b.result(i));
      if (res) res->push_back(b.packet(i));
    }
    return r;
  }
};

const Bytes kInner = ipv4("10.1.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));  // 40 bytes

// xfrm_state_check_expire runs before a packet is counted: with packet-soft 2 the third
// packet fires the (single) soft expire; with packet-hard 4 the fifth is dropped, and the SA
// stays expired.
TEST(XfrmParity, OutboundSoftThenHardPacketLimit) {
  Pair p(kSa + "limit packet-soft 2 limit packet-hard 4" + kGcm, kSa + kGcm);
  Counters c;
  EXPECT_EQ(p.enc({kInner, kInner}, c), (std::vector<Drop>{Drop::kOk, Drop::kOk}));
  EXPECT_EQ(c.soft_expires, 0u);
  EXPECT_FALSE(p.out[0].dying);
  EXPECT_EQ(p.enc({kInner, kInner, kInner, kInner}, c),
            (std::vector<Drop>{Drop::kOk, Drop::kOk, Drop::kLimit, Drop::kLimit}));
  EXPECT_EQ(c.soft_expires, 1u);
  EXPECT_EQ(p.out[0].soft_expires, 1u);
  EXPECT_TRUE(p.out[0].dying);
  EXPECT_TRUE(p.out[0].expired);
  EXPECT_EQ(c.packets, 4u);
  EXPECT_EQ(c[Drop::kLimit], 2u);
  EXPECT_EQ(p.out[0].stats.c[Drop::kLimit], 2u);
  EXPECT_STREQ(xfrm_stat_name(Drop::kLimit, false), "XfrmOutStateExpired");
}

// A limit of 0 is a limit (iproute2 passes it as given; only an unset one is XFRM_INF):
// xfrm_state_check_expire's `>=` expires the SA at its first packet (knod read 0 as none).
TEST(XfrmParity, LimitZeroExpiresAtTheFirstPacket) {
  Pair p(kSa + "limit packet-hard 0" + kGcm, kSa + kGcm);
  Counters c;
  EXPECT_EQ(p.enc({kInner}, c), std::vector<Drop>{Drop::kLimit});
  EXPECT_TRUE(p.out[0].expired);
  Pair q(kSa + "limit byte-soft 0" + kGcm, kSa + kGcm);
  Counters cq;
  EXPECT_EQ(q.enc({kInner, kInner}, cq), (std::vector<Drop>{Drop::kOk, Drop::kOk}));
  EXPECT_EQ(cq.soft_expires, 1u);
  EXPECT_EQ(q.out[0].cfg.limits.packet_hard, kXfrmInf);  // unset
}

TEST(XfrmParity, OutboundByteSoftLimit) {
  // 40-byte packets: after 3 packets 120 bytes >= 100, so the fourth fires the soft expire.
  Pair p(kSa + "limit byte-soft 100" + kGcm, kSa + kGcm);
  Counters c;
  p.enc({kInner, kInner, kInner}, c);
  EXPECT_EQ(c.soft_expires, 0u);
  p.enc({kInner, kInner}, c);
  EXPECT_EQ(c.soft_expires, 1u);
  EXPECT_EQ(c.packets, 5u);  // soft: the packets go on
}

TEST(XfrmParity, InboundHardLimitExpiresAndUpdateClearsDying) {
  Pair p(kSa + kGcm, kSa + "limit packet-soft 1 limit packet-hard 2" + kGcm);
  Counters ce, cd;
  std::vector<Bytes> esp;
  p.enc({kInner, kInner, kInner}, ce, &esp);
  std::vector<Bytes> plain;
  EXPECT_EQ(p.dec(esp, cd, nullptr, &plain),
            (std::vector<Drop>{Drop::kOk, Drop::kOk, Drop::kLimit}));
  EXPECT_EQ(plain[0], kInner);
  EXPECT_EQ(cd.soft_expires, 1u);
  EXPECT_TRUE(p.in[0].expired);
  EXPECT_EQ(p.in[0].stats.c[Drop::kLimit], 1u);
  EXPECT_STREQ(xfrm_stat_name(Drop::kLimit, true), "XfrmInStateExpired");
  // The expired packet did not move the window: its sequence number is still acceptable
  // to the SA's window (replay-window 32, top 2).
  EXPECT_EQ(p.in[0].replay.top, 2u);
}

// Replay is checked before the lifetime, as in xfrm_input: a replayed packet on an expired
// SA is XfrmInStateSeqError, not XfrmInStateExpired.
TEST(XfrmParity, ReplayCheckedBeforeLifetime) {
  Pair p(kSa + kGcm, kSa + "limit packet-hard 1" + kGcm);
  Counters ce, cd;
  std::vector<Bytes> esp;
  p.enc({kInner, kInner}, ce, &esp);
  EXPECT_EQ(p.dec({esp[0]}, cd), std::vector<Drop>{Drop::kOk});
  EXPECT_EQ(p.dec({esp[0], esp[1]}, cd), (std::vector<Drop>{Drop::kReplay, Drop::kLimit}));
}

TEST(XfrmParity, InboundSelectorMismatchIsCounted) {
  std::string sel = "sel src 10.1.0.0/16 dst 10.2.0.0/16 ";
  Pair p(kSa + kGcm, kSa + sel + kGcm);
  Bytes outside = ipv4("10.9.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Counters ce, cd;
  std::vector<Bytes> esp;
  p.enc({kInner, outside}, ce, &esp);
  EXPECT_EQ(p.dec(esp, cd), (std::vector<Drop>{Drop::kOk, Drop::kStateMismatch}));
  EXPECT_EQ(cd[Drop::kStateMismatch], 1u);
  EXPECT_EQ(p.in[0].stats.c[Drop::kStateMismatch], 1u);
  EXPECT_EQ(p.in[0].stats.c.packets, 1u);
  EXPECT_STREQ(xfrm_stat_name(Drop::kStateMismatch, true), "XfrmInStateMismatch");
}

TEST(XfrmParity, InboundPolicyBlockAndTemplate) {
  Pair p(kSa + kGcm, kSa + kGcm);
  Bytes other = ipv4("10.3.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes third = ipv4("10.4.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes fourth = ipv4("10.5.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes none = ipv4("10.6.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  XfrmConfig c = parse_text(
      "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst "
      "192.0.2.2 proto esp reqid 1 mode tunnel\n"
      "ip xfrm policy add src 10.3.0.0/16 dst 10.2.0.0/16 dir in action block\n"
      "ip xfrm policy add src 10.4.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst "
      "192.0.2.2 proto esp reqid 7 mode tunnel\n"
      "ip xfrm policy add src 10.5.0.0/16 dst 10.2.0.0/16 dir in\n"
      // A `dir out` policy never applies to decrypted packets.
      "ip xfrm policy add src 10.6.0.0/16 dst 10.2.0.0/16 dir out action block\n");
  Spd spd;
  for (auto& pol : c.policies) spd.add(pol);
  Counters ce, cd;
  std::vector<Bytes> esp;
  p.enc({kInner, other, third, fourth, none}, ce, &esp);
  EXPECT_EQ(p.dec(esp, cd, &spd),
            (std::vector<Drop>{Drop::kOk, Drop::kPolBlock, Drop::kTmplMismatch, Drop::kTmplMismatch,
                               Drop::kNoPols}));
  EXPECT_EQ(cd[Drop::kPolBlock], 1u);
  EXPECT_EQ(cd[Drop::kTmplMismatch], 2u);
  EXPECT_EQ(cd[Drop::kNoPols], 1u);  // tunnel mode, no `dir in` policy: secpath_has_nontransport
  EXPECT_STREQ(xfrm_stat_name(Drop::kNoPols, true), "XfrmInNoPols");
  EXPECT_STREQ(xfrm_stat_name(Drop::kPolBlock, true), "XfrmInPolBlock");
  EXPECT_STREQ(xfrm_stat_name(Drop::kTmplMismatch, true), "XfrmInTmplMismatch");
}

// No `dir in` policy for the decrypted packet: a transport-mode SA's packet is accepted, a
// tunnel-mode one dropped (__xfrm_policy_check: secpath_has_nontransport -> XfrmInNoPols).
TEST(XfrmParity, NoInboundPolicyDropsTunnelModeOnly) {
  const std::string transport =
      "ip xfrm state add src 10.1.0.5 dst 10.2.0.9 proto esp spi 0x11 reqid 2 mode transport "
      "replay-window 32 ";
  XfrmConfig c = parse_text(
      "ip xfrm policy add src 10.7.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst "
      "192.0.2.2 proto esp reqid 1 mode tunnel\n");
  Spd spd;
  for (auto& pol : c.policies) spd.add(pol);
  Counters ce, cd;
  std::vector<Bytes> esp;
  Pair tun(kSa + kGcm, kSa + kGcm);
  tun.enc({kInner, kInner}, ce, &esp);
  // The window moved for the dropped packet (xfrm_input advances it before the policy check).
  EXPECT_EQ(tun.dec({esp[0], esp[0]}, cd, &spd), (std::vector<Drop>{Drop::kNoPols, Drop::kReplay}));
  EXPECT_EQ(tun.dec({esp[1]}, cd, nullptr), std::vector<Drop>{Drop::kOk});  // no SPD: no check
  Pair tr(transport + kGcm, transport + kGcm);
  esp.clear();
  tr.enc({kInner}, ce, &esp);
  EXPECT_EQ(tr.dec(esp, cd, &spd), std::vector<Drop>{Drop::kOk});
}

// Cleartext against `dir in` policies (__xfrm_policy_check without a secpath): a policy with a
// template wants IPsec (XfrmInTmplMismatch), a block policy drops (XfrmInPolBlock), no policy
// or a template-less allow passes, and IKE (UDP 500) passes whatever the policy.
TEST(XfrmParity, CleartextAgainstInboundPolicies) {
  Pair p(kSa + kGcm, kSa + kGcm);
  XfrmConfig c = parse_text(
      "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst "
      "192.0.2.2 proto esp reqid 1 mode tunnel\n"
      "ip xfrm policy add src 10.3.0.0/16 dst 10.2.0.0/16 dir in action block\n"
      "ip xfrm policy add src 10.4.0.0/16 dst 10.2.0.0/16 dir in\n"
      "ip xfrm policy add src 192.0.2.1/32 dst 192.0.2.2/32 dir in tmpl src 192.0.2.1 dst "
      "192.0.2.2 proto esp reqid 1 mode transport\n");
  Spd spd;
  for (auto& pol : c.policies) spd.add(pol);
  Bytes wants_esp = ipv4("10.1.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes blocked = ipv4("10.3.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes allowed = ipv4("10.4.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes no_policy = ipv4("10.9.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)));
  Bytes ike = ipv4("192.0.2.1", "192.0.2.2", 17, udp(500, 500, counting(12)));
  Counters cd;
  EXPECT_EQ(p.dec({wants_esp, blocked, allowed, no_policy, ike}, cd, &spd),
            (std::vector<Drop>{Drop::kTmplMismatch, Drop::kPolBlock, Drop::kNotEsp, Drop::kNotEsp,
                               Drop::kNotEsp}));
  Counters cn;  // without an SPD nothing is checked
  EXPECT_EQ(p.dec({wants_esp}, cn, nullptr), std::vector<Drop>{Drop::kNotEsp});
}

// Inbound UDP is ESP-in-UDP only on an encapsulation port (4500 or an SA's encap port), as
// the kernel decapsulates only on an encap socket: DNS or IKE on 500 is handed on unchanged,
// also when its first four bytes are not zero.
TEST(XfrmParity, PlainUdpIsNotEsp) {
  Pair p(kSa + kGcm, kSa + kGcm);
  Bytes dns = ipv4("192.0.2.1", "192.0.2.2", 17, udp(5353, 53, counting(24)));
  Bytes ike = ipv4("192.0.2.1", "192.0.2.2", 17, udp(500, 500, counting(24)));
  Bytes natt = ipv4("192.0.2.1", "192.0.2.2", 17, udp(4500, 4500, counting(24)));
  Counters cd;
  std::vector<Bytes> out;
  EXPECT_EQ(p.dec({dns, ike, natt}, cd, nullptr, &out),
            (std::vector<Drop>{Drop::kNotEsp, Drop::kNotEsp, Drop::kUnknownSpi}));
  EXPECT_EQ(out[0], dns);
  EXPECT_EQ(out[1], ike);
  EXPECT_EQ(cd[Drop::kUnknownSpi], 1u);  // 4500 with a non-zero marker: ESP, no such SA
}

// Tunnel decapsulation with an outer CE mark on an ECT inner packet sets CE (RFC 6040) and
// updates the inner IPv4 checksum incrementally: the header still sums to 0xffff.
TEST(XfrmParity, DecapEcnKeepsInnerChecksumValid) {
  Pair p(kSa + kGcm, kSa + kGcm);
  Bytes ect = ipv4("10.1.0.5", "10.2.0.9", 17, udp(5, 6, counting(12)), 0x02);
  Counters ce, cd;
  std::vector<Bytes> esp, plain;
  p.enc({ect}, ce, &esp);
  esp[0][1] |= 0x03;  // the outer header is not authenticated (RFC 4303 §3.1.2)
  ipv4_set_csum(esp[0].data());
  EXPECT_EQ(p.dec(esp, cd, nullptr, &plain), std::vector<Drop>{Drop::kOk});
  EXPECT_EQ(plain[0][1], 0x03);
  EXPECT_EQ(csum_fold(csum_add(0, plain[0].data(), 20)), 0);
  Bytes want = ect;
  want[1] = 0x03;
  ipv4_set_csum(want.data());
  EXPECT_EQ(plain[0], want);
}

TEST(XfrmParity, KernelCounterNames) {
  EXPECT_STREQ(xfrm_stat_name(Drop::kUnknownSpi, true), "XfrmInNoStates");
  EXPECT_STREQ(xfrm_stat_name(Drop::kNoSa, false), "XfrmOutNoStates");
  EXPECT_STREQ(xfrm_stat_name(Drop::kIntegrity, true), "XfrmInStateProtoError");
  EXPECT_STREQ(xfrm_stat_name(Drop::kReplay, true), "XfrmInStateSeqError");
  EXPECT_STREQ(xfrm_stat_name(Drop::kTooOld, true), "XfrmInStateSeqError");
  EXPECT_STREQ(xfrm_stat_name(Drop::kSeqOverflow, false), "XfrmOutStateSeqError");
  EXPECT_STREQ(xfrm_stat_name(Drop::kShort, true), "XfrmInHdrError");
  EXPECT_EQ(xfrm_stat_name(Drop::kNoPolicy, false), nullptr);  // sent in the clear
  EXPECT_EQ(xfrm_stat_name(Drop::kNotEsp, true), nullptr);
  EXPECT_EQ(xfrm_stat_name(Drop::kOk, true), nullptr);
}

}  // namespace
}  // namespace knod::xfrm
