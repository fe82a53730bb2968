// One ESP AEAD operation (a CryptoOp) with the portable ciphers: AES-GCM (RFC 4106),
// AES-GMAC (RFC 4543) and ChaCha20-Poly1305 (RFC 7634). PortableSa is the whole per-SA
// state, a plain struct that can be copied to GPU memory as is.
#pragma once

#include "xfrm/crypto/engine.h"
#include "xfrm/crypto/portable/chacha20_poly1305.h"
#include "xfrm/crypto/portable/gcm.h"

namespace knod::xfrm::portable {

enum class AeadKind : uint8_t { kNone, kGcm, kGmac, kChaCha20Poly1305 };

/// Per-SA keys: expanded AES key + GHASH table, or the ChaCha20 key; salt and ICV bytes.
struct PortableSa {
  AeadKind kind = AeadKind::kNone;
  uint8_t icv_len = 0;  ///< 8, 12 or 16
  uint8_t salt[4] = {};
  uint8_t chacha_key[32] = {};
  GcmKey gcm;
};

/// Fills `sa` from an SA's config. False when the SA is not an AEAD the portable code has
/// (CBC/HMAC, null) or its key/ICV length is invalid.
KNOD_HD inline bool portable_sa_init(PortableSa& sa, const SaConfig& c, const Tables& t) {
  sa = PortableSa{};
  if (c.icv_len != 8 && c.icv_len != 12 && c.icv_len != 16) return false;
  sa.icv_len = c.icv_len;
  copy_bytes(sa.salt, c.salt, 4);
  switch (c.cipher) {
    case Cipher::kAesGcm:
    case Cipher::kAesGmac:
      sa.kind = c.cipher == Cipher::kAesGcm ? AeadKind::kGcm : AeadKind::kGmac;
      return gcm_init(sa.gcm, c.enc_key, c.enc_key_len, t);
    case Cipher::kChaCha20Poly1305:
      if (c.enc_key_len != 32 || c.icv_len != 16) return false;
      sa.kind = AeadKind::kChaCha20Poly1305;
      copy_bytes(sa.chacha_key, c.enc_key, 32);
      return true;
    default:
      return false;
  }
}

/// Runs `op` (encrypt when `enc`, else verify-then-decrypt) and sets op.ok.
/// `te0`/`sbox`: t.te0/t.sbox or a copy of them (GPU shared memory).
KNOD_HD inline void aead_run(const PortableSa& sa, const Tables& t, const uint32_t* te0,
                             const uint8_t* sbox, CryptoOp& op, bool enc) {
  uint8_t nonce[12];
  copy_bytes(nonce, sa.salt, 4);
  copy_bytes(nonce + 4, op.iv, 8);
  if (sa.kind == AeadKind::kGcm || sa.kind == AeadKind::kGmac) {
    GcmIo io{nonce, op.aad, op.aad_len, op.aad2, op.aad2_len, op.data, op.len};
    if (enc) {
      gcm_seal(sa.gcm, t, te0, sbox, io, op.icv, sa.icv_len);
      op.ok = 1;
    } else {
      op.ok = gcm_open(sa.gcm, t, te0, sbox, io, op.icv, sa.icv_len);
    }
  } else if (sa.kind == AeadKind::kChaCha20Poly1305) {
    ChachaIo io{nonce, op.aad, op.aad_len, op.aad2, op.aad2_len, op.data, op.len};
    if (enc) {
      chacha_poly_seal(sa.chacha_key, io, op.icv, sa.icv_len);
      op.ok = 1;
    } else {
      op.ok = chacha_poly_open(sa.chacha_key, io, op.icv, sa.icv_len);
    }
  } else {
    op.ok = 0;
  }
}

}  // namespace knod::xfrm::portable
