// NIST CAVP AES-GCM vectors (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp from Debian's
// python3-cryptography-vectors) through the OpenSSL engine: the cases an ESP SA can express
// (96-bit nonce = 4-byte salt | 8-byte IV; tags of 64, 96, 128 bits), any AAD and length.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "util.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/crypto/portable_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

struct Vec {
  std::map<std::string, std::string> f;
  bool fail = false;
};

std::vector<Vec> load(const std::string& path) {
  std::ifstream in(path);
  std::vector<Vec> out;
  std::string line;
  Vec cur;
  bool open = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("Count = ", 0) == 0) {
      if (open) out.push_back(cur);
      cur = Vec{};
      open = true;
    } else if (open && line == "FAIL") {
      cur.fail = true;
    } else if (open && line.find(" = ") != std::string::npos && line[0] != '[') {
      auto eq = line.find(" = ");
      cur.f[line.substr(0, eq)] = line.substr(eq + 3);
    } else if (open && line.find(" =") == line.size() - 2 && !line.empty()) {
      cur.f[line.substr(0, line.size() - 2)] = "";
    }
  }
  if (open) out.push_back(cur);
  return out;
}

struct Result {
  uint32_t run = 0, passed = 0;
};

template <class Engine>
Result run_file(const std::string& name, bool encrypt) {
  Result r;
  for (const Vec& v : load(std::string(KNOD_GCM_VECTORS) + "/" + name)) {
    Bytes key = hex(v.f.at("Key")), iv = hex(v.f.at("IV")), aad = hex(v.f.at("AAD")),
          tag = hex(v.f.at("Tag")), ct = hex(v.f.at("CT"));
    if (iv.size() != 12 || (tag.size() != 8 && tag.size() != 12 && tag.size() != 16)) continue;
    SaConfig c;
    c.cipher = Cipher::kAesGcm;
    std::copy(key.begin(), key.end(), c.enc_key);
    c.enc_key_len = uint8_t(key.size());
    std::copy(iv.begin(), iv.begin() + 4, c.salt);
    c.icv_len = uint8_t(tag.size());
    Engine eng;
    eng.add_sa(0, c);
    CryptoOp op;
    op.iv = iv.data() + 4;
    op.aad2 = aad.data(), op.aad2_len = uint32_t(aad.size());
    Bytes icv(tag.size());
    ++r.run;
    if (encrypt) {
      Bytes buf = hex(v.f.at("PT"));
      op.data = buf.data(), op.len = uint32_t(buf.size()), op.icv = icv.data();
      eng.encrypt(&op, 1);
      r.passed += op.ok && buf == ct && icv == tag;
    } else {
      Bytes buf = ct;
      icv = tag;
      op.data = buf.data(), op.len = uint32_t(buf.size()), op.icv = icv.data();
      eng.decrypt(&op, 1);
      r.passed += v.fail ? !op.ok : (op.ok && buf == hex(v.f.at("PT")));
    }
  }
  return r;
}

class NistGcm : public ::testing::TestWithParam<std::pair<const char*, bool>> {};

TEST_P(NistGcm, AllUsableVectorsPass) {
  auto [file, enc] = GetParam();
  Result r = run_file<OpensslEngine>(file, enc);
  EXPECT_GT(r.run, 500u) << file;  // 96-bit IV cases with ESP tag sizes
  EXPECT_EQ(r.passed, r.run) << file;
}

/// The same vectors through knod's own AES-GCM (xfrm/crypto/portable, also the GPU's code).
TEST_P(NistGcm, PortableEnginePassesAll) {
  auto [file, enc] = GetParam();
  Result r = run_file<PortableEngine>(file, enc);
  EXPECT_GT(r.run, 500u) << file;
  EXPECT_EQ(r.passed, r.run) << file;
}

INSTANTIATE_TEST_SUITE_P(Cavp, NistGcm,
                         ::testing::Values(std::make_pair("gcmEncryptExtIV128.rsp", true),
                                           std::make_pair("gcmEncryptExtIV192.rsp", true),
                                           std::make_pair("gcmEncryptExtIV256.rsp", true),
                                           std::make_pair("gcmDecrypt128.rsp", false),
                                           std::make_pair("gcmDecrypt192.rsp", false),
                                           std::make_pair("gcmDecrypt256.rsp", false)));

}  // namespace
}  // namespace knod::xfrm
