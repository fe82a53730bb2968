// AES-GCM (NIST SP 800-38D) with a 96-bit nonce, as ESP uses it (RFC 4106: nonce = salt | IV;
// RFC 4543 GMAC: everything is AAD). AAD comes in two pieces (ESP's SPI|seq, then e.g. GMAC's
// IV..trailer); tags are truncated to 8, 12 or 16 bytes.
#pragma once

#include "xfrm/crypto/portable/aes.h"
#include "xfrm/crypto/portable/ghash.h"

namespace knod::xfrm::portable {

struct GcmKey {
  AesKey aes;
  GhashKey h;
};

/// Expands `key` (16, 24 or 32 bytes) and derives H = E(K, 0^128). False for a bad length.
KNOD_HD inline bool gcm_init(GcmKey& k, const uint8_t* key, uint32_t len, const Tables& t) {
  if (!aes_expand(k.aes, key, len, t)) return false;
  uint8_t h[16] = {};
  aes_encrypt(k.aes, t.te0, t.sbox, h, h);
  ghash_init_key(k.h, h);
  return true;
}

/// The inputs of one GCM operation. `data` is ciphered in place.
struct GcmIo {
  const uint8_t* nonce;  ///< 12 bytes
  const uint8_t* aad;
  uint32_t aad_len;
  const uint8_t* aad2;
  uint32_t aad2_len;
  uint8_t* data;
  uint32_t len;
};

namespace detail {

/// CTR over `data` from counter block J0 + 1 (inc32, SP 800-38D §6.2).
KNOD_HD inline void gcm_ctr(const GcmKey& k, const uint32_t* te0, const uint8_t* sbox,
                            const uint8_t* nonce, uint8_t* data, uint32_t len) {
  uint8_t ctr[16], ks[16];
  copy_bytes(ctr, nonce, 12);
  uint32_t c = 2;
  for (uint32_t off = 0; off < len; off += 16, ++c) {
    store_be32(ctr + 12, c);
    aes_encrypt(k.aes, te0, sbox, ctr, ks);
    uint32_t n = len - off < 16 ? len - off : 16;
    for (uint32_t i = 0; i < n; ++i) data[off + i] ^= ks[i];
  }
}

/// Full 16-byte tag over the AAD pieces and the ciphertext now in io.data.
KNOD_HD inline void gcm_tag(const GcmKey& k, const Tables& t, const uint32_t* te0,
                            const uint8_t* sbox, const GcmIo& io, uint8_t tag[16]) {
  Ghash g;
  ghash_update(g, k.h, t.ghash_rem, io.aad, io.aad_len);
  ghash_update(g, k.h, t.ghash_rem, io.aad2, io.aad2_len);
  ghash_pad(g, k.h, t.ghash_rem);
  ghash_update(g, k.h, t.ghash_rem, io.data, io.len);
  ghash_pad(g, k.h, t.ghash_rem);
  uint8_t lens[16];
  store_be64(lens, uint64_t(io.aad_len + io.aad2_len) * 8);
  store_be64(lens + 8, uint64_t(io.len) * 8);
  ghash_block(g, k.h, t.ghash_rem, lens);
  uint8_t j0[16];
  copy_bytes(j0, io.nonce, 12);
  store_be32(j0 + 12, 1);
  aes_encrypt(k.aes, te0, sbox, j0, tag);
  store_be64(lens, g.yh), store_be64(lens + 8, g.yl);
  for (int i = 0; i < 16; ++i) tag[i] ^= lens[i];
}

}  // namespace detail

/// Encrypts io.data in place and writes the first `icv_len` tag bytes to `icv`.
/// `te0`/`sbox` may point to a copy of t.te0/t.sbox (GPU shared memory).
KNOD_HD inline void gcm_seal(const GcmKey& k, const Tables& t, const uint32_t* te0,
                             const uint8_t* sbox, const GcmIo& io, uint8_t* icv, uint32_t icv_len) {
  detail::gcm_ctr(k, te0, sbox, io.nonce, io.data, io.len);
  uint8_t tag[16];
  detail::gcm_tag(k, t, te0, sbox, io, tag);
  copy_bytes(icv, tag, icv_len);
}

/// Verifies `icv` (constant-time compare) and only then decrypts io.data in place.
KNOD_HD inline bool gcm_open(const GcmKey& k, const Tables& t, const uint32_t* te0,
                             const uint8_t* sbox, const GcmIo& io, const uint8_t* icv,
                             uint32_t icv_len) {
  uint8_t tag[16];
  detail::gcm_tag(k, t, te0, sbox, io, tag);
  if (!equal_ct(tag, icv, icv_len)) return false;
  detail::gcm_ctr(k, te0, sbox, io.nonce, io.data, io.len);
  return true;
}

}  // namespace knod::xfrm::portable
