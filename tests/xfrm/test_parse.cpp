// ip-xfrm grammar: real iproute2 lines, parsed field by field; unsupported words rejected.
#include <gtest/gtest.h>

#include "base/error.h"
#include "util.h"
#include "xfrm/install.h"

namespace knod::xfrm {
namespace {
using test::state;

TEST(XfrmParse, GcmTunnelState) {
  SaConfig c = state(
      "ip xfrm state add src 192.0.2.1 dst 198.51.100.2 proto esp spi 0x00001000 reqid 7 "
      "mode tunnel replay-window 128 flag esn noecn aead 'rfc4106(gcm(aes))' "
      "0x0102030405060708090a0b0c0d0e0f1011121314 128");
  EXPECT_EQ(to_string(c.src), "192.0.2.1");
  EXPECT_EQ(to_string(c.dst), "198.51.100.2");
  EXPECT_EQ(c.spi, 0x1000u);
  EXPECT_EQ(c.reqid, 7u);
  EXPECT_EQ(c.mode, Mode::kTunnel);
  EXPECT_EQ(c.replay_window, 128u);
  EXPECT_EQ(c.flags, uint32_t(kFlagEsn | kFlagNoEcn));
  EXPECT_EQ(c.cipher, Cipher::kAesGcm);
  EXPECT_EQ(c.enc_key_len, 16);
  EXPECT_EQ(c.enc_key[0], 0x01);
  EXPECT_EQ(c.enc_key[15], 0x10);
  EXPECT_EQ(c.salt[0], 0x11);
  EXPECT_EQ(c.salt[3], 0x14);
  EXPECT_EQ(c.icv_len, 16);
  EXPECT_EQ(c.iv_len(), 8u);
}

TEST(XfrmParse, CbcHmacNatTSelLimits) {
  SaConfig c = state(
      "xfrm state add src fd00::1 dst fd00::2 proto esp spi 4097 mode transport "
      "enc 'cbc(aes)' 0x000102030405060708090a0b0c0d0e0f "
      "auth-trunc 'hmac(sha256)' "
      "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 128 "
      "encap espinudp 4500 4501 0.0.0.0 sel src fd00::/64 dst fd00::2/128 proto udp dport 53 "
      "limit packet-hard 1000 limit byte-soft 5000 extra-flag dont-encap-dscp flag decap-dscp "
      "nopmtudisc");
  EXPECT_EQ(c.src.family, 6);
  EXPECT_EQ(c.spi, 4097u);
  EXPECT_EQ(c.cipher, Cipher::kAesCbc);
  EXPECT_EQ(c.auth, Auth::kHmacSha256);
  EXPECT_EQ(c.auth_key_len, 32);
  EXPECT_EQ(c.icv_len, 16);
  EXPECT_TRUE(c.encap);
  EXPECT_EQ(c.encap_sport, 4500);
  EXPECT_EQ(c.encap_dport, 4501);
  EXPECT_EQ(c.sel.src.plen, 64);
  EXPECT_EQ(c.sel.proto, 17);
  EXPECT_EQ(c.sel.dport, 53);
  EXPECT_EQ(c.limits.packet_hard, 1000u);
  EXPECT_EQ(c.limits.byte_soft, 5000u);
  EXPECT_EQ(c.flags, uint32_t(kXFlagDontEncapDscp | kFlagDecapDscp | kFlagNoPmtuDisc));
  EXPECT_EQ(c.iv_len(), 16u);
  EXPECT_EQ(c.align(), 16u);
}

// `knod xfrm -f` prints a state's selector in the words the parser takes back.
TEST(XfrmParse, StateSelectorIsPrintedAndParsesBack) {
  SaConfig c = state(
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 mode transport "
      "aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f1011121314 128 "
      "sel src 10.1.0.0/16 dst 10.2.0.7/32 proto udp sport 5000 dport 53");
  const std::string text = format_state(c);
  EXPECT_NE(text.find(" sel src 10.1.0.0/16 dst 10.2.0.7/32 proto 17 sport 5000 dport 53"),
            std::string::npos)
      << text;
  const std::string base =
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 mode transport "
      "aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f1011121314 128";
  SaConfig back = state(base + text.substr(text.find(" sel ")));
  EXPECT_EQ(back.sel.src.plen, 16);
  EXPECT_EQ(to_string(back.sel.dst), "10.2.0.7/32");
  EXPECT_EQ(back.sel.proto, 17);
  EXPECT_EQ(back.sel.sport, 5000);
  EXPECT_EQ(back.sel.dport, 53);
  SaConfig none = state(
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1002 mode transport "
      "aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f1011121314 128");
  EXPECT_EQ(format_state(none).find(" sel"), std::string::npos) << format_state(none);
}

// What the parser took in is printed (helper-53: replay-seq/-oseq and limits were not), in
// its own words; unset ones are not.
TEST(XfrmParse, StateCountersAndLimitsArePrinted) {
  const std::string base =
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 mode transport "
      "aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f1011121314 128 ";
  const std::string text =
      format_state(state(base + "replay-window 32 flag esn replay-seq 0x30 replay-oseq-hi 1 "
                                "replay-oseq 0x100 limit packet-hard 0 limit byte-soft 5000"));
  EXPECT_NE(text.find(" replay-seq 0x30 replay-oseq-hi 0x1 replay-oseq 0x100 limit byte-soft "
                      "5000 limit packet-hard 0 aead "),
            std::string::npos)
      << text;
  const std::string plain = format_state(state(base));
  EXPECT_EQ(plain.find("replay-seq"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("replay-oseq"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("limit"), std::string::npos) << plain;
}

TEST(XfrmParse, ReplayCounters) {
  SaConfig c = state(
      "ip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 replay-oseq-hi 1 "
      "replay-oseq 0xfffffffe replay-seq 5 replay-seq-hi 2 flag esn replay-window 32 "
      "aead 'rfc4106(gcm(aes))' 0x" +
      std::string(40, '1') + " 128");
  EXPECT_EQ(c.oseq, 0x1fffffffeull);
  EXPECT_EQ(c.seq, 0x200000005ull);
  Sad sad;
  Sa& sa = sad.add(c);
  EXPECT_EQ(sa.oseq.load(), 0x1fffffffeull);
  EXPECT_EQ(sa.replay.top, 0x200000005ull);
}

TEST(XfrmParse, OtherAlgorithms) {
  auto k36 = std::string("0x") + std::string(72, 'a');
  EXPECT_EQ(state("xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 aead "
                  "'rfc7539esp(chacha20,poly1305)' " +
                  k36 + " 128")
                .cipher,
            Cipher::kChaCha20Poly1305);
  SaConfig g = state(
      "xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 aead "
      "'rfc4543(gcm(aes))' " +
      k36 + " 128");
  EXPECT_EQ(g.cipher, Cipher::kAesGmac);
  EXPECT_EQ(g.enc_key_len, 32);
  SaConfig n = state(
      "xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 enc 'cipher_null' \"\" "
      "auth-trunc 'hmac(sha1)' 0x0102030405060708090a0b0c0d0e0f1011121314 96");
  EXPECT_EQ(n.cipher, Cipher::kNull);
  EXPECT_EQ(n.icv_len, 12);
  SaConfig d =
      state("xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 enc 'cbc(des3_ede)' 0x" +
            std::string(48, '1') + " auth 'hmac(sha512)' 0x" + std::string(128, '2'));
  EXPECT_EQ(d.cipher, Cipher::kDes3Cbc);
  EXPECT_EQ(d.icv_len, 32);  // kernel default truncation for hmac(sha512): 256 bits
  EXPECT_EQ(
      state("xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 enc 'cbc(aes)' 0x" +
            std::string(32, '1') + " auth-trunc 'hmac(sha384)' 0x" + std::string(96, '2') + " 192")
          .icv_len,
      24);
}

void expect_error(const std::string& line, const std::string& word) {
  XfrmConfig c;
  try {
    parse_line(line, c);
    FAIL() << "accepted: " << line;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(XfrmParse, UnsupportedWordsNamed) {
  std::string base = "ip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 ";
  std::string gcm = " aead 'rfc4106(gcm(aes))' 0x" + std::string(40, '1') + " 128";
  expect_error(base + "mode beet" + gcm, "beet");
  expect_error(base + "flag wildrecv" + gcm, "wildrecv");
  expect_error(base + "aead 'rfc4309(ccm(aes))' 0x" + std::string(40, '1') + " 128",
               "rfc4309(ccm(aes))");
  expect_error(base + "enc 'cbc(camellia)' 0x" + std::string(32, '1'), "cbc(camellia)");
  expect_error(base + "limit time-hard 10" + gcm, "time-hard");
  expect_error(base + "encap espintcp 1 2 0.0.0.0" + gcm, "espintcp");
  expect_error(base + "replay-window 4097" + gcm, "4097");
  expect_error(base + "mark 7" + gcm, "mark");
  expect_error("ip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto ah spi 1" + gcm, "ah");
  expect_error(base + "aead 'rfc4106(gcm(aes))' 0x" + std::string(40, '1') + " 100", "100");
  expect_error(base + "aead 'rfc4106(gcm(aes))' 0x1234 128", "2 bytes");
  // What is missing or wrong is named, with what would do (helper-53).
  expect_error(base + "aead 'rfc4106(gcm(aes))' 0x" + std::string(40, '1'),
               "xfrm: aead ALGO-ICV-LEN is missing");
  expect_error(base + "enc 'cbc(aes)'", "xfrm: enc ALGO-KEYMAT is missing");
  expect_error(base + "aead 'rfc4106(gcm(aes))' 0x" + std::string(40, '1') + " 100",
               "(the kernel's: 64, 96 or 128)");
  expect_error(base + "enc 'cbc(aes)' 0x" + std::string(32, '1') + " auth-trunc 'hmac(sha1)' 0x" +
                   std::string(40, '1') + " 20",
               "(a multiple of 8 from 32 to 160)");
  expect_error("ip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi",
               "'spi' needs an argument");
  expect_error("ip xfrm policy add src 10.0.0.0/8 dst 10.1.0.0/16 dir out dev eth0", "dev");
  // Not a config at all (a pcap given by mistake): quoted printable, \xNN, cut at 60 bytes.
  expect_error(
      std::string("\xd4\xc3\xb2\xa1 \x02") + std::string(100, 'a'),
      "got '\\xd4\\xc3\\xb2\\xa1 \\x02aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
}

// What iproute2 itself refuses before the kernel sees it (ip/xfrm_state.c duparg, the address
// family check of ip/xfrm_policy.c), and a NUL byte, which used to end the line silently.
TEST(XfrmParse, RefusedAsIproute2Does) {
  std::string base = "ip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 1 ";
  std::string gcm = " aead 'rfc4106(gcm(aes))' 0x" + std::string(40, '1') + " 128";
  std::string cbc = " enc 'cbc(aes)' 0x" + std::string(32, '1');
  std::string sha = " auth-trunc 'hmac(sha256)' 0x" + std::string(64, '1') + " 128";
  const std::string dup = "xfrm: duplicate \"ALGO-TYPE\": ";
  expect_error(base + gcm + gcm, dup + "\"aead\" is the second value");
  expect_error(base + cbc + sha + cbc, dup + "\"enc\" is the second value");
  expect_error(base + cbc + sha + sha, dup + "\"auth-trunc\" is the second value");
  const std::string fam =
      "the same address family is required between values after \"src\" and \"dst\"";
  expect_error("ip xfrm policy add src 10.0.0.0/8 dst fd00::/64 dir out", fam);
  expect_error(
      "ip xfrm policy add src 10.0.0.0/8 dst 10.1.0.0/16 dir out tmpl src 192.0.2.1 dst "
      "2001:db8::2 "
      "proto esp mode tunnel",
      fam);
  expect_error(base + "sel src 10.0.0.1 dst fd00::1" + gcm, fam);
  expect_error(base + std::string("mode tun") + '\0' + "nel" + gcm,
               "a NUL byte in 'ip xfrm state add");
  // xfrm_init_replay: ESN without a replay window is EINVAL (no window given means 0).
  const std::string esn0 = "flag esn needs replay-window 1 or more";
  expect_error(base + "flag esn" + gcm, esn0);
  expect_error(base + "replay-window 0 flag esn" + gcm, esn0);
  EXPECT_EQ(parse_text(base + "replay-window 1 flag esn" + gcm).states.at(0).replay_window, 1u);
}

TEST(Spd, AddOfAnInstalledSelectorFailsAndUpdateReplaces) {
  XfrmConfig c = parse_text(
      "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out priority 5\n"
      "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir in priority 5\n"
      "ip xfrm policy update src 10.1.0.0/16 dst 10.2.0.0/16 dir out priority 7\n");
  Sad sad;
  Spd spd;
  install(c, sad, spd);
  EXPECT_EQ(spd.size(), 2u);
  FlowKey k{parse_addr("10.1.0.1"), parse_addr("10.2.0.1"), 17, 1, 2};
  ASSERT_NE(spd.lookup(Dir::kOut, k), nullptr);
  EXPECT_EQ(spd.lookup(Dir::kOut, k)->priority, 7u);
  EXPECT_EQ(spd.lookup(Dir::kIn, k)->priority, 5u);
  EXPECT_THROW(spd.add(c.policies[1]), Error);
}

TEST(XfrmParse, PolicyAndFile) {
  XfrmConfig c = parse_text(
      "# comment\n"
      "\n"
      "ip xfrm policy add src 10.0.1.0/24 dst 10.0.2.0/24 proto tcp dport 443 dir out priority 10 "
      "\\\n"
      "   tmpl src 192.0.2.1 dst 192.0.2.2 proto esp reqid 5 mode tunnel\n"
      "xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x10 reqid 5 mode tunnel aead "
      "'rfc4106(gcm(aes))' 0x" +
          std::string(40, 'f') + " 128  # trailing comment\n",
      "cfg");
  ASSERT_EQ(c.policies.size(), 1u);
  ASSERT_EQ(c.states.size(), 1u);
  const Policy& p = c.policies[0];
  EXPECT_EQ(to_string(p.sel.src), "10.0.1.0/24");
  EXPECT_EQ(p.sel.proto, 6);
  EXPECT_EQ(p.sel.dport, 443);
  EXPECT_EQ(p.dir, Dir::kOut);
  EXPECT_EQ(p.priority, 10u);
  EXPECT_TRUE(p.has_tmpl);
  EXPECT_EQ(to_string(p.tmpl.dst), "192.0.2.2");
  EXPECT_EQ(p.tmpl.reqid, 5u);
  EXPECT_EQ(p.tmpl.mode, Mode::kTunnel);
  FlowKey k{parse_addr("10.0.1.9"), parse_addr("10.0.2.3"), 6, 1234, 443};
  EXPECT_TRUE(selector_match(p.sel, k));
  k.dport = 80;
  EXPECT_FALSE(selector_match(p.sel, k));
  try {
    parse_text("\n\nxfrm state add src 1.1.1.1 bogus\n", "f.conf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f.conf:3: xfrm: unsupported state word 'bogus'");
  }
}

TEST(XfrmParse, ContinuationAtEndOfFileIsAnError) {
  try {
    parse_text("# sa\nip xfrm state add src 1.1.1.1 dst 2.2.2.2 proto esp spi 0x100 \\\n",
               "f.conf");
    FAIL() << "a dangling '\\' must not drop the line";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f.conf:2: line continuation ('\\') at the end of the file");
  }
}

TEST(XfrmParse, ExampleFilesParse) {
  for (const char* f : {"gcm_tunnel.conf", "nat_t.conf", "all_algorithms.conf"}) {
    XfrmConfig c = parse_file(std::string(KNOD_XFRM_EXAMPLES) + "/" + f);
    EXPECT_FALSE(c.states.empty()) << f;
  }
}

}  // namespace
}  // namespace knod::xfrm
