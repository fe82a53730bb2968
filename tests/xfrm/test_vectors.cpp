// Known-answer ESP vectors: RFC 7634 Appendix A (ChaCha20-Poly1305 ESP example, exact bytes)
// and draft-mcgrew-gcm-test-01 (AES-GCM ESP packets, with and without ESN).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include "util.h"
#include "vectors.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/crypto/portable_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

TEST(XfrmVectors, Rfc7634AppendixA) {
  rfc7634_appendix_a<OpensslEngine>();
}

template <class Engine>
void mcgrew_case(const McGrew& v) {
  Bytes key = hex(v.key), packet = hex(v.packet), plain = hex(v.plain);
  bool esn = std::string(v.seq).size() == 16;
  uint64_t seq = std::stoull(v.seq, nullptr, 16);
  std::string line = std::string("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x") +
                     v.spi + " mode transport replay-window 64 " + (esn ? "flag esn " : "") +
                     "aead 'rfc4106(gcm(aes))' 0x";
  std::string khex;
  for (uint8_t b : key) khex += fmt::format("{:02x}", b);
  line += khex + " 128";
  Sad sad;
  Sa& sa = sad.add(state(line));
  replay_init(sa.replay, 64, seq - 1);  // window top just below: inference yields seq's high bits
  Engine eng;
  engine_load(eng, sad);
  TestBatch b({ipv4("192.0.2.1", "192.0.2.2", kProtoEsp, packet)});
  Counters c;
  esp_decrypt_batch(sad, eng, b.b, c);
  ASSERT_EQ(b.result(0), Drop::kOk) << drop_name(b.result(0));
  uint8_t padlen = plain[plain.size() - 2], nh = plain.back();
  Bytes expect = ipv4("192.0.2.1", "192.0.2.2", nh, Bytes(plain.begin(), plain.end() - 2 - padlen));
  EXPECT_EQ(b.packet(0), expect);
  EXPECT_EQ(sa.replay.top, seq);
  // Encrypt direction through the engine, with the vector's IV and ESP AAD.
  Bytes buf = plain;
  Bytes icv(16);
  Bytes iv(packet.begin() + 8, packet.begin() + 16);
  CryptoOp op;
  op.sa = 0, op.iv = iv.data(), op.data = buf.data(), op.len = uint32_t(buf.size());
  op.icv = icv.data();
  st32(op.aad, sa.cfg.spi);
  if (esn)
    st32(op.aad + 4, uint32_t(seq >> 32)), st32(op.aad + 8, uint32_t(seq)), op.aad_len = 12;
  else
    st32(op.aad + 4, uint32_t(seq)), op.aad_len = 8;
  eng.encrypt(&op, 1);
  ASSERT_TRUE(op.ok);
  buf.insert(buf.end(), icv.begin(), icv.end());
  EXPECT_EQ(buf, Bytes(packet.begin() + 16, packet.end()));
}

class McGrewGcm : public ::testing::TestWithParam<McGrew> {};

TEST_P(McGrewGcm, DecryptsThroughEspInAndEncryptsThroughEngine) {
  mcgrew_case<OpensslEngine>(GetParam());
}
/// The same vectors through knod's own AES-GCM (xfrm/crypto/portable).
TEST_P(McGrewGcm, PortableEngineDecryptsAndEncrypts) {
  mcgrew_case<PortableEngine>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(DraftMcgrewGcmTest01, McGrewGcm, ::testing::ValuesIn(kMcGrewCases));

}  // namespace
}  // namespace knod::xfrm
