// Crypto engine over OpenSSL 3 EVP: one EVP_CIPHER_CTX (key scheduled once) and one
// EVP_MAC_CTX per SA, reused for every packet (only the IV is set per op).
#pragma once

#include <memory>
#include <vector>

#include "xfrm/crypto/engine.h"

namespace knod::xfrm {

class OpensslEngine final : public CryptoEngine {
 public:
  OpensslEngine();
  ~OpensslEngine() override;
  const char* name() const override { return "openssl"; }
  void add_sa(uint32_t id, const SaConfig& cfg) override;
  void encrypt(CryptoOp* ops, uint32_t n) override;
  void decrypt(CryptoOp* ops, uint32_t n) override;

  struct SaCtx;

 private:
  std::vector<std::unique_ptr<SaCtx>> sas_;
};

}  // namespace knod::xfrm
