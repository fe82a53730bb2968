// Crypto engine over knod's own AEAD code (xfrm/crypto/portable/): AES-GCM, AES-GMAC and
// ChaCha20-Poly1305, the same code the CUDA engine runs on the GPU, here on the host so it
// can be checked against OpenSSL and the NIST/RFC vectors. CBC/HMAC and null SAs are not
// supported (add_sa throws).
#pragma once

#include <vector>

#include "xfrm/crypto/engine.h"
#include "xfrm/crypto/portable/aead.h"

namespace knod::xfrm {

class PortableEngine final : public CryptoEngine {
 public:
  const char* name() const override { return "portable"; }
  /// Throws knod::Error "xfrm: portable engine: <alg> not supported (AEAD only)" for
  /// non-AEAD SAs, or for a bad key/ICV length.
  void add_sa(uint32_t id, const SaConfig& cfg) override;
  void encrypt(CryptoOp* ops, uint32_t n) override;
  void decrypt(CryptoOp* ops, uint32_t n) override;
  /// The per-SA state by id (kind kNone for ids never added).
  const std::vector<portable::PortableSa>& sas() const { return sas_; }

 private:
  std::vector<portable::PortableSa> sas_;
};

}  // namespace knod::xfrm
