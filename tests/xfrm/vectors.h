// Known-answer ESP vectors shared by test_vectors.cpp (OpenSSL and portable engines) and
// test_portable.cpp: RFC 7634 Appendix A (ChaCha20-Poly1305 ESP, exact bytes) and the
// draft-mcgrew-gcm-test-01 §2 AES-GCM ESP packets. One copy of each table.
#pragma once

#include <gtest/gtest.h>

#include "util.h"

namespace knod::xfrm::test {

/// RFC 7634 Appendix A: tunnel mode, SPI 0x01020304, seq 5, IV 10..17, salt a0a1a2a3.
struct Rfc7634 {
  static constexpr const char* kState =
      "ip xfrm state add src 203.0.113.1 dst 203.0.113.2 proto esp spi 0x01020304 "
      "mode tunnel aead 'rfc7539esp(chacha20,poly1305)' "
      "0x808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3 128";
  static constexpr const char* kIv = "1011121314151617";  ///< the RFC's IV (knod sends the seq)
  /// Inner packet (84 bytes).
  static Bytes inner() {
    return hex(
        "4500 0054 a6f2 0000 4001 e778 c633 6405 c000 0205 0800 5b7a 3a08 0000 553b ec10"
        "0007 3627 0809 0a0b 0c0d 0e0f 1011 1213 1415 1617 1819 1a1b 1c1d 1e1f 2021 2223"
        "2425 2627 2829 2a2b 2c2d 2e2f 3031 3233 3435 3637");
  }
  /// The ESP part of the RFC's packet (after the outer IPv4 header).
  static Bytes esp() {
    return hex(
        "01020304 00000005 1011121314151617"
        "24039428b97f417e3c13753a4f05087b67c352e6a7fab1b982d466ef407ae5c6"
        "14ee8099d52844eb61aa95dfab4c02f72aa71e7c4c4f64c9befe2facc638e8f3"
        "cbec163fac469b502773f6fb94e664da9165b82829f641e0"
        "76aaa8266b7fb0f7b11b369907e1ad43");
  }
};

/// RFC 7634 Appendix A through `Engine`: esp_out_prepare with seq 5 and the RFC's IV gives
/// the RFC's bytes, and esp_decrypt_batch gives the inner packet back.
template <class Engine>
void rfc7634_appendix_a() {
  Bytes inner = Rfc7634::inner(), expect_esp = Rfc7634::esp();
  Sad sad;
  sad.add(state(Rfc7634::kState));
  Engine eng;
  engine_load(eng, sad);
  TestBatch b({inner});
  CryptoOp op;
  ASSERT_EQ(esp_out_prepare(sad[0].cfg, 0, 5, b.frames.data(), b.kStride, b.off[0], b.len[0], op),
            Drop::kOk);
  Bytes iv = hex(Rfc7634::kIv);
  std::copy(iv.begin(), iv.end(), op.iv);
  eng.encrypt(&op, 1);
  ASSERT_TRUE(op.ok);
  Bytes pkt = b.packet(0);
  ASSERT_EQ(pkt.size(), 20 + expect_esp.size());
  EXPECT_EQ(Bytes(pkt.begin() + 20, pkt.end()), expect_esp);
  EXPECT_EQ(pkt[9], kProtoEsp);
  EXPECT_EQ(pkt[8], 64);  // outer TTL
  // And back: knod decrypts the RFC's packet to the inner one.
  Sad in;
  in.add(sad[0].cfg);
  Engine eng_in;
  engine_load(eng_in, in);
  TestBatch r({pkt});
  Counters c;
  esp_decrypt_batch(in, eng_in, r.b, c);
  ASSERT_EQ(r.result(0), Drop::kOk);
  EXPECT_EQ(r.packet(0), inner);
}

struct McGrew {
  const char* key;  // key | salt
  const char* spi;
  const char* seq;  // 8 hex digits, or 16 with ESN
  const char* plain;
  const char* packet;  // SPI | seq-lo | IV | ciphertext | ICV
};

// draft-mcgrew-gcm-test-01 §2 test cases (ESP payloads), transcribed.
inline const McGrew kMcGrewCases[] = {
    {"4c80cdefbb5d10da906ac73c3613a634 2e443b68", "00004321", "8765432100000000",
     "45000048699a000080114db7c0a80102c0a801010a9bf15638d3010000010000"
     "00000000045f736970045f756470037369700963796265726369747902646b00"
     "0021000101020201",
     "00004321000000004956ed7e3b244cfe"
     "fecf537e729d5b07dc30df528dd22b768d1b98736696a6fd348509fa13ceac34"
     "cfa2436f14a3f3cf65925bf1f4a13c5d15b21e1884f5ff6247aeabb786b93bce"
     "61bc17d768fd9732459018148f6cbe722fd04796562dfdb4"},
    {"feffe9928665731c6d6a8f9467308308 cafebabe", "0000a5f8", "0000000a",
     "4500003e698f000080114dccc0a80102c0a801010a980035002a2343b2d00100"
     "0001000000000000037369700963796265726369747902646b00000100010001",
     "0000a5f80000000afacedbaddecaf888"
     "deb22cd9b07c72c16e3a65beeb8df304a5a5897d33ae530f1ba76d5d114d2a5c"
     "3de81827c10e9a4f51330d0eec416642cfbb85a5b47e48a4ec3b9ba95d918bd1"
     "83b70d3aa8bc6ee4c309e9d85a41ad4a"},
    {"abbccddef00112233445566778899aababbccddef00112233445566778899aab 11223344", "4a2cbfe3",
     "00000002",
     "4500003069a6400080062690c0a801029389155e0a9e008b2dc57ee000000000"
     "7002400020bf0000020405b40101040201020201",
     "4a2cbfe3000000020102030405060708"
     "ff425c9b724599df7a3bcd510194e00d6a78107f1b0b1cbf06efae9d65a5d763"
     "748a637985771d347f0545659f14e99def842d8eb335f4eecfdbf831824b4c49"
     "15956c96"},
    {"00000000000000000000000000000000 00000000", "00000000", "00000001",
     "4500003c99c500008001cb7a40679318010101010800075c0200440061626364"
     "65666768696a6b6c6d6e6f70717273747576776162636465666768690102 0201",
     "00000000000000010000000000000000"
     "4688daf2f973a392732909c331d56d60f694abaa414b5e7ff5fdcdfff5e9a284"
     "456476492719ffb64de7d9dca1e1d894bc3bd57873ed4d181d19d4d5c8c18af3"
     "f821d496eeb096e98ad2b69e4799c71d"},
    {"3de09874b388e6491988d0c3607eae1f 57690e43", "42f67e3f", "1010101010101010",
     "4500003c99c300008001cb7c40679318010101010800085c0200430061626364"
     "65666768696a6b6c6d6e6f70717273747576776162636465666768690102 0201",
     "42f67e3f101010104e280000a2fca1a3"
     "fba2caa4853cf9f0f22cb10d86dd83b0fec75691cf1a04b00d1138ec9c357917"
     "65acbd8701ad79845bf9fe3fba487bc91755e6662b4c8d0d1f5e22739530320a"
     "e0d731cc978ecafaeae88f00e80d6e48"},
    {"feffe9928665731c6d6a8f9467308308feffe9928665731c cafebabe", "0000a5f8", "0000000a",
     "45000028a4ad4000400678800a01038f0a010612802306b8cb712602dd6bb03e"
     "501016d075680001",
     "0000a5f80000000afacedbaddecaf888"
     "a5b1f8066029aea40e598b8122de02420938b3ab33f828e687b8858b5bfbdbd0"
     "315b27452144cc7795457b9652037f5318027b5b4cd7a636"},
    {"abbccddef00112233445566778899aababbccddef00112233445566778899aab 73616c74", "17405e67",
     "156f3126dd0db99b",
     "45080028732c00004006e9f90a0106120a01038f06b88023dd6bafbecb712602"
     "50101f646d540001",
     "17405e67dd0db99b616e640169766563"
     "f2d69ecdbd5a0d5b8d5ef38bad4da58d1f278fde98ef67549d524a3018d9a57f"
     "f4d3a31ce673119e451626c2415771e3b7eebca614c89b35"},
    {"7d773d00c144c525ac619d18c84a3f47 d9664267", "335467ae", "ffffffff", "01020201",
     "335467aeffffffff43457e9182443bc6437f866bcb3f699fe9b0822bac961c4504bef270"},
    {"6c6567616c697a656d6172696a75616e61616e64646f69746265666f72656961 7475726e", "796b6963",
     "ffffffffffffffff",
     "45000030da3a00008001df3bc0a80005c0a800010800c6cd0200070061626364"
     "65666768696a6b6c6d6e6f707172737401020201",
     "796b6963ffffffff333021696765746d"
     "f97ab2aa356d8edce17644ac8c78e25dd24dedbb29ebf1b64a274b39b49c3a86"
     "4cd3d78ca4ae68a32b42458fb57dbe821dcc63b9d0937ba2945f669368661a32"
     "9fb4c053"},
};

}  // namespace knod::xfrm::test
