// GHASH (NIST SP 800-38D §6.4) with a per-key table of 16 multiples of H (Shoup's 4-bit
// method), over a byte stream that may arrive in pieces (AAD parts, then ciphertext).
// Blocks are big-endian (hi, lo) 64-bit pairs; bit 0 of the block is the MSB of hi.
#pragma once

#include "xfrm/crypto/portable/tables.h"

namespace knod::xfrm::portable {

/// m[n] = n·H for every 4-bit n (bit 3 of n is the coefficient of x^0).
struct GhashKey {
  uint64_t hi[16], lo[16];
};

KNOD_HD inline void ghash_init_key(GhashKey& k, const uint8_t h[16]) {
  uint64_t vh = load_be64(h), vl = load_be64(h + 8);
  k.hi[0] = k.lo[0] = 0;
  for (int bit = 8; bit >= 1; bit >>= 1) {  // m[8] = H, m[4] = H·x, m[2] = H·x^2, m[1] = H·x^3
    k.hi[bit] = vh, k.lo[bit] = vl;
    bool out = vl & 1;
    vl = (vl >> 1) | (vh << 63);
    vh = (vh >> 1) ^ (out ? 0xe100000000000000ull : 0);
  }
  for (int n = 2; n < 16; n <<= 1)
    for (int j = 1; j < n; ++j) k.hi[n + j] = k.hi[n] ^ k.hi[j], k.lo[n + j] = k.lo[n] ^ k.lo[j];
}

/// Running GHASH: Y (hi, lo) and a partial block buffer.
struct Ghash {
  uint64_t yh = 0, yl = 0;
  uint8_t buf[16];
  uint32_t fill = 0;
};

/// Y = (Y ^ block) · H.
KNOD_HD inline void ghash_block(Ghash& g, const GhashKey& k, const uint64_t* rem,
                                const uint8_t* b) {
  uint64_t xh = g.yh ^ load_be64(b), xl = g.yl ^ load_be64(b + 8);
  // Horner over the 32 nibbles, last (highest degree) first: Z = Z·x^4 + m[nibble].
  uint64_t zh = 0, zl = 0;
  for (int i = 31; i >= 0; --i) {
    uint64_t word = i < 16 ? xh : xl;
    uint32_t nib = uint32_t(word >> (4 * (15 - (i & 15)))) & 15;
    if (i != 31) {
      uint32_t r = uint32_t(zl) & 15;
      zl = (zl >> 4) | (zh << 60);
      zh = (zh >> 4) ^ rem[r];
    }
    zh ^= k.hi[nib], zl ^= k.lo[nib];
  }
  g.yh = zh, g.yl = zl;
}

KNOD_HD inline void ghash_update(Ghash& g, const GhashKey& k, const uint64_t* rem, const uint8_t* p,
                                 uint32_t n) {
  while (n && g.fill) {
    g.buf[g.fill++] = *p++, --n;
    if (g.fill == 16) ghash_block(g, k, rem, g.buf), g.fill = 0;
  }
  for (; n >= 16; p += 16, n -= 16) ghash_block(g, k, rem, p);
  for (uint32_t i = 0; i < n; ++i) g.buf[g.fill++] = p[i];
}

/// Zero-pads a partial block (the end of the AAD or of the ciphertext).
KNOD_HD inline void ghash_pad(Ghash& g, const GhashKey& k, const uint64_t* rem) {
  if (!g.fill) return;
  for (uint32_t i = g.fill; i < 16; ++i) g.buf[i] = 0;
  ghash_block(g, k, rem, g.buf);
  g.fill = 0;
}

}  // namespace knod::xfrm::portable
