#include "xfrm/crypto/openssl_engine.h"

#include <fmt/core.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstring>

#include "base/error.h"

namespace knod::xfrm {

struct OpensslEngine::SaCtx {
  SaConfig cfg;
  EVP_CIPHER_CTX* enc = nullptr;  ///< keyed for encryption
  EVP_CIPHER_CTX* dec = nullptr;  ///< keyed for decryption
  EVP_MAC_CTX* mac = nullptr;     ///< keyed HMAC; re-initialised per op with the same key
  ~SaCtx() {
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
    EVP_MAC_CTX_free(mac);
  }
};

namespace {

const EVP_CIPHER* cipher_of(const SaConfig& c) {
  switch (c.cipher) {
    case Cipher::kAesGcm:
    case Cipher::kAesGmac:
      return c.enc_key_len == 16   ? EVP_aes_128_gcm()
             : c.enc_key_len == 24 ? EVP_aes_192_gcm()
                                   : EVP_aes_256_gcm();
    case Cipher::kChaCha20Poly1305:
      return EVP_chacha20_poly1305();
    case Cipher::kAesCbc:
      return c.enc_key_len == 16   ? EVP_aes_128_cbc()
             : c.enc_key_len == 24 ? EVP_aes_192_cbc()
                                   : EVP_aes_256_cbc();
    case Cipher::kDes3Cbc:
      return EVP_des_ede3_cbc();
    case Cipher::kNull:
      return nullptr;
  }
  return nullptr;
}

const char* digest_of(Auth a) {
  switch (a) {
    case Auth::kHmacSha1:
      return "SHA1";
    case Auth::kHmacSha256:
      return "SHA256";
    case Auth::kHmacSha384:
      return "SHA384";
    case Auth::kHmacSha512:
      return "SHA512";
    case Auth::kNone:
      return nullptr;
  }
  return nullptr;
}

EVP_CIPHER_CTX* keyed(const EVP_CIPHER* c, const SaConfig& cfg, int enc) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx || !EVP_CipherInit_ex(ctx, c, nullptr, nullptr, nullptr, enc))
    throw Error("xfrm: OpenSSL cipher init failed");
  if (cfg.aead()) EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr);
  if (!EVP_CipherInit_ex(ctx, nullptr, nullptr, cfg.enc_key, nullptr, enc))
    throw Error("xfrm: OpenSSL key setup failed");
  if (!cfg.aead()) EVP_CIPHER_CTX_set_padding(ctx, 0);
  return ctx;
}

/// AEAD (GCM, GMAC, ChaCha20-Poly1305): nonce = salt | IV (RFC 4106 §4, RFC 7634 §2).
bool aead_op(EVP_CIPHER_CTX* ctx, const SaConfig& c, CryptoOp& op, int enc) {
  uint8_t nonce[12];
  std::memcpy(nonce, c.salt, 4);
  std::memcpy(nonce + 4, op.iv, 8);
  int outl = 0;
  if (!EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, nonce, enc)) return false;
  if (!enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, c.icv_len, op.icv)) return false;
  if (!EVP_CipherUpdate(ctx, nullptr, &outl, op.aad, op.aad_len)) return false;
  // RFC 4543 §3.3: for GMAC the IV and the whole payload are AAD (aad2), len is 0.
  if (op.aad2_len && !EVP_CipherUpdate(ctx, nullptr, &outl, op.aad2, int(op.aad2_len)))
    return false;
  if (op.len && !EVP_CipherUpdate(ctx, op.data, &outl, op.data, int(op.len))) return false;
  uint8_t tail[16];
  if (EVP_CipherFinal_ex(ctx, tail, &outl) != 1) return false;  // decrypt: tag mismatch
  if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, c.icv_len, op.icv)) return false;
  return true;
}

bool hmac(EVP_MAC_CTX* mac, const CryptoOp& op, uint8_t* out, size_t* outl) {
  if (!EVP_MAC_init(mac, nullptr, 0, nullptr)) return false;
  if (!EVP_MAC_update(mac, op.auth, op.auth_len)) return false;
  if (op.esn) {
    uint8_t hi[4] = {uint8_t(op.seq_hi >> 24), uint8_t(op.seq_hi >> 16), uint8_t(op.seq_hi >> 8),
                     uint8_t(op.seq_hi)};
    if (!EVP_MAC_update(mac, hi, 4)) return false;
  }
  return EVP_MAC_final(mac, out, outl, 64);
}

bool cbc(EVP_CIPHER_CTX* ctx, CryptoOp& op, int enc) {
  int outl = 0;
  if (!ctx) return true;  // cipher_null
  if (!EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, op.iv, enc)) return false;
  return EVP_CipherUpdate(ctx, op.data, &outl, op.data, int(op.len)) && outl == int(op.len);
}

}  // namespace

OpensslEngine::OpensslEngine() = default;
OpensslEngine::~OpensslEngine() = default;

void OpensslEngine::add_sa(uint32_t id, const SaConfig& cfg) {
  if (sas_.size() <= id) sas_.resize(id + 1);
  auto s = std::make_unique<SaCtx>();
  s->cfg = cfg;
  if (const EVP_CIPHER* c = cipher_of(cfg)) {
    s->enc = keyed(c, cfg, 1);
    s->dec = keyed(c, cfg, 0);
  }
  if (const char* d = digest_of(cfg.auth)) {
    EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    s->mac = m ? EVP_MAC_CTX_new(m) : nullptr;
    EVP_MAC_free(m);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(d), 0),
        OSSL_PARAM_construct_end()};
    if (!s->mac || !EVP_MAC_init(s->mac, cfg.auth_key, cfg.auth_key_len, params))
      throw Error(fmt::format("xfrm: OpenSSL HMAC-{} unavailable", d));
  }
  sas_[id] = std::move(s);
}

void OpensslEngine::encrypt(CryptoOp* ops, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    CryptoOp& op = ops[i];
    if (i + 1 < n) __builtin_prefetch(ops[i + 1].data);
    SaCtx* s = op.sa < sas_.size() ? sas_[op.sa].get() : nullptr;
    op.ok = 0;
    if (!s) continue;
    if (s->cfg.aead()) {
      op.ok = aead_op(s->enc, s->cfg, op, 1);
    } else {
      uint8_t md[64];
      size_t mdl = 0;
      // No auth (cipher_null alone: RFC 4303 §3.2 allows one of the two): no ICV.
      op.ok = cbc(s->enc, op, 1) && (!s->mac || hmac(s->mac, op, md, &mdl));
      if (op.ok && s->mac) std::memcpy(op.icv, md, s->cfg.icv_len);
    }
  }
}

void OpensslEngine::decrypt(CryptoOp* ops, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    CryptoOp& op = ops[i];
    if (i + 1 < n) __builtin_prefetch(ops[i + 1].data);
    SaCtx* s = op.sa < sas_.size() ? sas_[op.sa].get() : nullptr;
    op.ok = 0;
    if (!s) continue;
    if (s->cfg.aead()) {
      op.ok = aead_op(s->dec, s->cfg, op, 0);
    } else {
      uint8_t md[64];
      size_t mdl = 0;
      // ICV first, constant-time compare (RFC 4303 §3.4.4), then decipher.
      op.ok = (!s->mac ||
               (hmac(s->mac, op, md, &mdl) && CRYPTO_memcmp(md, op.icv, s->cfg.icv_len) == 0)) &&
              cbc(s->dec, op, 0);
    }
  }
}

}  // namespace knod::xfrm
