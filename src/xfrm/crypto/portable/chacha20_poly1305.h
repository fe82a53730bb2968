// ChaCha20-Poly1305 AEAD (RFC 8439 §2.8), 96-bit nonce (ESP: salt | IV, RFC 7634 §2),
// AAD in two pieces, 16-byte tag.
#pragma once

#include "xfrm/crypto/portable/chacha20.h"
#include "xfrm/crypto/portable/poly1305.h"

namespace knod::xfrm::portable {

struct ChachaIo {
  const uint8_t* nonce;  ///< 12 bytes
  const uint8_t* aad;
  uint32_t aad_len;
  const uint8_t* aad2;
  uint32_t aad2_len;
  uint8_t* data;  ///< ciphered in place
  uint32_t len;
};

namespace detail {

KNOD_HD inline void chacha_poly_tag(const uint8_t key[32], const ChachaIo& io, uint8_t tag[16]) {
  uint8_t block[64];
  chacha20_block(key, 0, io.nonce, block);  // one-time key: first 32 bytes of block 0
  Poly1305 p;
  poly1305_init(p, block);
  poly1305_update(p, io.aad, io.aad_len);
  poly1305_update(p, io.aad2, io.aad2_len);
  poly1305_pad16(p);
  poly1305_update(p, io.data, io.len);
  poly1305_pad16(p);
  uint8_t lens[16];
  uint64_t a = uint64_t(io.aad_len) + io.aad2_len, c = io.len;
  store_le32(lens, uint32_t(a)), store_le32(lens + 4, uint32_t(a >> 32));
  store_le32(lens + 8, uint32_t(c)), store_le32(lens + 12, uint32_t(c >> 32));
  poly1305_update(p, lens, 16);
  poly1305_final(p, tag);
}

}  // namespace detail

/// Encrypts io.data in place (counter 1 onward) and writes the first `icv_len` tag bytes.
KNOD_HD inline void chacha_poly_seal(const uint8_t key[32], const ChachaIo& io, uint8_t* icv,
                                     uint32_t icv_len) {
  chacha20_xor(key, 1, io.nonce, io.data, io.len);
  uint8_t tag[16];
  detail::chacha_poly_tag(key, io, tag);
  copy_bytes(icv, tag, icv_len);
}

/// Verifies `icv` (constant-time compare), then decrypts io.data in place.
KNOD_HD inline bool chacha_poly_open(const uint8_t key[32], const ChachaIo& io, const uint8_t* icv,
                                     uint32_t icv_len) {
  uint8_t tag[16];
  detail::chacha_poly_tag(key, io, tag);
  if (!equal_ct(tag, icv, icv_len)) return false;
  chacha20_xor(key, 1, io.nonce, io.data, io.len);
  return true;
}

}  // namespace knod::xfrm::portable
