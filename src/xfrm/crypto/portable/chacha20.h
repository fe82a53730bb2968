// ChaCha20 block function and cipher (RFC 8439 §2.3, §2.4): 256-bit key, 32-bit block
// counter, 96-bit nonce. Constant time (add, rotate, xor only).
#pragma once

#include "xfrm/crypto/portable/hd.h"

namespace knod::xfrm::portable {

/// Writes the 64-byte key stream block for (key, counter, nonce) to `out`.
KNOD_HD inline void chacha20_block(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                                   uint8_t out[64]) {
  uint32_t in[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
  for (int i = 0; i < 8; ++i) in[4 + i] = load_le32(key + 4 * i);
  in[12] = counter;
  for (int i = 0; i < 3; ++i) in[13 + i] = load_le32(nonce + 4 * i);
  uint32_t x[16];
  for (int i = 0; i < 16; ++i) x[i] = in[i];
  auto qr = [&x](int a, int b, int c, int d) {
    x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 16);
    x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 12);
    x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 8);
    x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 7);
  };
  for (int r = 0; r < 10; ++r) {
    qr(0, 4, 8, 12), qr(1, 5, 9, 13), qr(2, 6, 10, 14), qr(3, 7, 11, 15);
    qr(0, 5, 10, 15), qr(1, 6, 11, 12), qr(2, 7, 8, 13), qr(3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) store_le32(out + 4 * i, x[i] + in[i]);
}

/// XORs `len` bytes at `data` with the key stream starting at block `counter`.
KNOD_HD inline void chacha20_xor(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                                 uint8_t* data, uint32_t len) {
  uint8_t ks[64];
  for (uint32_t off = 0; off < len; off += 64, ++counter) {
    chacha20_block(key, counter, nonce, ks);
    uint32_t n = len - off < 64 ? len - off : 64;
    for (uint32_t i = 0; i < n; ++i) data[off + i] ^= ks[i];
  }
}

}  // namespace knod::xfrm::portable
