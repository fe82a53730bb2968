// knod's own AEAD code (xfrm/crypto/portable, the code the GPU runs): RFC 8439 vectors,
// RFC 7634 Appendix A through ESP, and a randomized equivalence run against OpenSSL: random
// SAs and packets through esp_encrypt_batch / esp_decrypt_batch (with replays, reorders,
// bit flips, truncations) must give identical bytes and identical drop reasons.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <random>
#include <type_traits>

#include "base/error.h"
#include "util.h"
#include "vectors.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/crypto/portable/poly1305.h"
#include "xfrm/crypto/portable_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

TEST(PortablePoly1305, Rfc8439Section252) {
  Bytes key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
  std::string msg = "Cryptographic Forum Research Group";
  portable::Poly1305 p;
  portable::poly1305_init(p, key.data());
  portable::poly1305_update(p, reinterpret_cast<const uint8_t*>(msg.data()), 10);
  portable::poly1305_update(p, reinterpret_cast<const uint8_t*>(msg.data()) + 10,
                            uint32_t(msg.size() - 10));
  Bytes tag(16);
  portable::poly1305_final(p, tag.data());
  EXPECT_EQ(tag, hex("a8061dc1305136c6c22b8baf0c0127a9"));
}

TEST(PortableChaCha20, Rfc8439Section242) {
  Bytes key = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  Bytes nonce = hex("000000000000004a00000000");
  std::string pt =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      "future, sunscreen would be it.";
  Bytes buf(pt.begin(), pt.end());
  portable::chacha20_xor(key.data(), 1, nonce.data(), buf.data(), uint32_t(buf.size()));
  EXPECT_EQ(buf, hex("6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
                     "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
                     "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                     "5af90bbf74a35be6b40b8eedf2785e42874d"));
}

/// RFC 8439 §2.8.2 AEAD vector as an ESP op (nonce = 07000000 | 4041424344454647).
template <class Engine>
void aead_2_8_2() {
  SaConfig c;
  c.cipher = Cipher::kChaCha20Poly1305;
  Bytes key = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
  std::copy(key.begin(), key.end(), c.enc_key);
  c.enc_key_len = 32, c.icv_len = 16;
  Bytes salt = hex("07000000"), iv = hex("4041424344454647"), aad = hex("50515253c0c1c2c3c4c5c6c7");
  std::copy(salt.begin(), salt.end(), c.salt);
  std::string pt =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      "future, sunscreen would be it.";
  Bytes buf(pt.begin(), pt.end()), icv(16);
  Engine eng;
  eng.add_sa(0, c);
  CryptoOp op;
  op.iv = iv.data(), op.data = buf.data(), op.len = uint32_t(buf.size()), op.icv = icv.data();
  std::copy(aad.begin(), aad.end(), op.aad);
  op.aad_len = 12;
  eng.encrypt(&op, 1);
  ASSERT_TRUE(op.ok);
  EXPECT_EQ(buf, hex("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
                     "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
                     "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                     "3ff4def08e4b7a9de576d26586cec64b6116"));
  EXPECT_EQ(icv, hex("1ae10b594f09e26a7e902ecbd0600691"));
  eng.decrypt(&op, 1);
  ASSERT_TRUE(op.ok);
  EXPECT_EQ(buf, Bytes(pt.begin(), pt.end()));
  // A flipped tag bit fails and leaves the data as it was (verify before decrypt).
  eng.encrypt(&op, 1);
  Bytes sealed = buf;
  icv[15] ^= 1;
  eng.decrypt(&op, 1);
  EXPECT_FALSE(op.ok);
  if constexpr (std::is_same_v<Engine, PortableEngine>) {
    EXPECT_EQ(buf, sealed);
  }
}
TEST(PortableChaCha20Poly1305, Rfc8439Section282) {
  aead_2_8_2<PortableEngine>();
}
TEST(PortableChaCha20Poly1305, Rfc8439Section282OpenSsl) {
  aead_2_8_2<OpensslEngine>();
}

TEST(PortableEsp, Rfc7634AppendixA) {
  rfc7634_appendix_a<PortableEngine>();
}

TEST(PortableEngine, RejectsNonAead) {
  PortableEngine eng;
  SaConfig c = state(
      "ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x104 mode transport enc "
      "'cbc(aes)' 0x000102030405060708090a0b0c0d0e0f auth-trunc 'hmac(sha1)' "
      "0x000102030405060708090a0b0c0d0e0f10111213 96");
  EXPECT_THROW(eng.add_sa(0, c), knod::Error);
  CryptoOp op;  // an SA id never added fails the op, no crash
  op.sa = 7;
  eng.encrypt(&op, 1);
  EXPECT_FALSE(op.ok);
}

// ---- Randomized equivalence against OpenSSL ----

std::string rand_hex(std::mt19937_64& rng, size_t bytes) {
  std::string s;
  for (size_t i = 0; i < bytes; ++i) s += fmt::format("{:02x}", uint8_t(rng()));
  return s;
}

std::string random_sa(std::mt19937_64& rng, uint32_t spi, bool& v6) {
  int algo = int(rng() % 8);
  std::string aead;
  static const int kKey[] = {16, 24, 32};
  static const int kIcv[] = {64, 96, 128};
  if (algo < 5)  // AES-GCM, any key size and ICV size
    aead = fmt::format("aead 'rfc4106(gcm(aes))' 0x{} {}", rand_hex(rng, kKey[rng() % 3] + 4),
                       kIcv[rng() % 3]);
  else if (algo == 5)
    aead = fmt::format("aead 'rfc4543(gcm(aes))' 0x{} 128", rand_hex(rng, kKey[rng() % 3] + 4));
  else
    aead = fmt::format("aead 'rfc7539esp(chacha20,poly1305)' 0x{} 128", rand_hex(rng, 36));
  v6 = rng() % 3 == 0;
  bool tunnel = rng() & 1, esn = rng() & 1, natt = !v6 && rng() % 4 == 0;
  uint32_t window = uint32_t(rng() % 4) * 32;
  if (esn && window == 0) window = 1;  // the kernel refuses ESN without a window
  return fmt::format(
      "ip xfrm state add src {} dst {} proto esp spi 0x{:x} mode {} replay-window {} {} {} {}",
      v6 ? "2001:db8::1" : "192.0.2.1", v6 ? "2001:db8::2" : "192.0.2.2", spi,
      tunnel ? "tunnel" : "transport", window, esn ? "flag esn" : "", aead,
      natt ? "encap espinudp 4500 4500 0.0.0.0" : "");
}

Bytes random_packet(std::mt19937_64& rng, bool v6) {
  Bytes payload(rng() % 1400);
  for (auto& b : payload) b = uint8_t(rng());
  return v6 ? ipv6("2001:db8::1", "2001:db8::2", 17, payload, uint8_t(rng()))
            : ipv4("192.0.2.1", "192.0.2.2", 17, payload, uint8_t(rng()), rng() & 1);
}

TEST(PortableEquivalence, RandomSasAndPacketsMatchOpenSsl) {
  std::mt19937_64 rng(20260);
  uint32_t packets = 0, accepted = 0, dropped = 0;
  for (int round = 0; round < 150; ++round) {
    // A few SAs per round, same config on both sides and for both engines.
    uint32_t nsa = 1 + uint32_t(rng() % 3);
    std::vector<SaConfig> cfgs;
    std::vector<bool> fam6;
    for (uint32_t s = 0; s < nsa; ++s) {
      bool v6;
      cfgs.push_back(state(random_sa(rng, 0x100 + s, v6)));
      fam6.push_back(v6);
      if (rng() % 4 == 0) cfgs.back().oseq = 0xfffffff0ull + rng() % 32;  // near 2^32
    }
    Sad out_o, out_p;
    for (auto& c : cfgs) out_o.add(c), out_p.add(c);
    for (uint32_t s = 0; s < nsa; ++s) out_o[s].oseq = out_p[s].oseq = cfgs[s].oseq;
    OpensslEngine eo;
    PortableEngine ep;
    engine_load(eo, out_o);
    engine_load(ep, out_p);
    uint32_t n = 8 + uint32_t(rng() % 40);
    std::vector<Bytes> pkts;
    std::vector<uint32_t> sa_of;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t s = uint32_t(rng() % nsa);
      sa_of.push_back(s);
      pkts.push_back(random_packet(rng, fam6[s]));
    }
    TestBatch bo(pkts), bp(pkts);
    for (uint32_t i = 0; i < n; ++i) bo.sa[i] = bp.sa[i] = sa_of[i];
    Counters co, cp;
    esp_encrypt_batch(out_o, eo, bo.b, co);
    esp_encrypt_batch(out_p, ep, bp.b, cp);
    std::vector<Bytes> wire;
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(bo.result(i), bp.result(i)) << "round " << round << " packet " << i;
      ASSERT_EQ(bo.packet(i), bp.packet(i)) << "round " << round << " packet " << i;
      if (bo.result(i) == Drop::kOk) wire.push_back(bo.packet(i));
    }
    // Inbound: shuffle, duplicate, corrupt, truncate; then both engines must agree.
    std::vector<Bytes> in;
    for (const Bytes& w : wire) {
      Bytes p = w;
      uint32_t r = uint32_t(rng() % 10);
      if (r == 0 && p.size() > 30) p[20 + rng() % (p.size() - 20)] ^= uint8_t(1 << (rng() % 8));
      if (r == 1 && p.size() > 30) p.resize(p.size() - 1 - rng() % 8);
      in.push_back(p);
      if (r == 2) in.push_back(p);  // replay
    }
    std::shuffle(in.begin(), in.end(), rng);
    Sad in_o, in_p;
    for (auto& c : cfgs) in_o.add(c), in_p.add(c);
    for (uint32_t s = 0; s < nsa; ++s) {
      uint64_t top = cfgs[s].oseq > 4 ? cfgs[s].oseq - 4 : 0;  // window just below the sender
      replay_init(in_o[s].replay, cfgs[s].replay_window, top);
      replay_init(in_p[s].replay, cfgs[s].replay_window, top);
    }
    OpensslEngine io;
    PortableEngine ip;
    engine_load(io, in_o);
    engine_load(ip, in_p);
    TestBatch ro(in), rp(in);
    Counters dco, dcp;
    esp_decrypt_batch(in_o, io, ro.b, dco);
    esp_decrypt_batch(in_p, ip, rp.b, dcp);
    for (uint32_t i = 0; i < in.size(); ++i) {
      ++packets;
      ASSERT_EQ(ro.result(i), rp.result(i)) << "round " << round << " packet " << i;
      if (ro.result(i) == Drop::kOk) {
        ++accepted;
        ASSERT_EQ(ro.packet(i), rp.packet(i)) << "round " << round << " packet " << i;
      } else {
        ++dropped;
      }
    }
    for (uint32_t s = 0; s < nsa; ++s) {
      EXPECT_EQ(in_o[s].replay.top, in_p[s].replay.top);
      EXPECT_EQ(in_o[s].stats.c.packets, in_p[s].stats.c.packets);
      for (uint32_t d = 0; d < uint32_t(Drop::kCount); ++d)
        EXPECT_EQ(in_o[s].stats.c.drops[d], in_p[s].stats.c.drops[d]);
    }
  }
  EXPECT_GT(packets, 2000u);
  EXPECT_GT(accepted, 1000u);  // both outcomes exercised
  EXPECT_GT(dropped, 100u);
}

}  // namespace
}  // namespace knod::xfrm
