#include "xfrm/crypto/portable_engine.h"

#include <fmt/core.h>

#include "base/error.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::xfrm {

using portable::kTables;

void PortableEngine::add_sa(uint32_t id, const SaConfig& cfg) {
  portable::PortableSa s;
  if (!portable::portable_sa_init(s, cfg, kTables))
    throw Error(
        fmt::format("xfrm: portable engine: {} (key {} B, ICV {} B) not supported "
                    "(AES-GCM, AES-GMAC, ChaCha20-Poly1305 only)",
                    cipher_name(cfg.cipher), cfg.enc_key_len, cfg.icv_len));
  if (sas_.size() <= id) sas_.resize(id + 1);
  sas_[id] = s;
}

void PortableEngine::encrypt(CryptoOp* ops, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    CryptoOp& op = ops[i];
    op.ok = 0;
    if (op.sa < sas_.size())
      portable::aead_run(sas_[op.sa], kTables, kTables.te0, kTables.sbox, op, true);
  }
}

void PortableEngine::decrypt(CryptoOp* ops, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    CryptoOp& op = ops[i];
    op.ok = 0;
    if (op.sa < sas_.size())
      portable::aead_run(sas_[op.sa], kTables, kTables.te0, kTables.sbox, op, false);
  }
}

}  // namespace knod::xfrm
