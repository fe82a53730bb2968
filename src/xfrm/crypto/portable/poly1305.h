// Poly1305 one-time authenticator (RFC 8439 §2.5) in 26-bit limbs (32x32->64 products only,
// so it suits GPUs), over a stream of pieces; constant time.
#pragma once

#include "xfrm/crypto/portable/hd.h"

namespace knod::xfrm::portable {

struct Poly1305 {
  uint32_t r[5], h[5] = {0, 0, 0, 0, 0}, pad[4];
  uint8_t buf[16];
  uint32_t fill = 0;
};

/// Keys the authenticator with the 32-byte one-time key (r | s), clamping r (§2.5.1).
KNOD_HD inline void poly1305_init(Poly1305& p, const uint8_t key[32]) {
  p.r[0] = load_le32(key) & 0x3ffffff;
  p.r[1] = (load_le32(key + 3) >> 2) & 0x3ffff03;
  p.r[2] = (load_le32(key + 6) >> 4) & 0x3ffc0ff;
  p.r[3] = (load_le32(key + 9) >> 6) & 0x3f03fff;
  p.r[4] = (load_le32(key + 12) >> 8) & 0x00fffff;
  for (int i = 0; i < 4; ++i) p.pad[i] = load_le32(key + 16 + 4 * i);
  for (int i = 0; i < 5; ++i) p.h[i] = 0;
  p.fill = 0;
}

/// h = (h + block + 2^128·hibit) · r mod 2^130 - 5, for one 16-byte block.
KNOD_HD inline void poly1305_block(Poly1305& p, const uint8_t* m, uint32_t hibit) {
  const uint32_t r0 = p.r[0], r1 = p.r[1], r2 = p.r[2], r3 = p.r[3], r4 = p.r[4];
  const uint32_t s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5;
  uint32_t h0 = p.h[0] + (load_le32(m) & 0x3ffffff);
  uint32_t h1 = p.h[1] + ((load_le32(m + 3) >> 2) & 0x3ffffff);
  uint32_t h2 = p.h[2] + ((load_le32(m + 6) >> 4) & 0x3ffffff);
  uint32_t h3 = p.h[3] + ((load_le32(m + 9) >> 6) & 0x3ffffff);
  uint32_t h4 = p.h[4] + ((load_le32(m + 12) >> 8) | (hibit << 24));
  using u64 = uint64_t;
  u64 d0 = u64(h0) * r0 + u64(h1) * s4 + u64(h2) * s3 + u64(h3) * s2 + u64(h4) * s1;
  u64 d1 = u64(h0) * r1 + u64(h1) * r0 + u64(h2) * s4 + u64(h3) * s3 + u64(h4) * s2;
  u64 d2 = u64(h0) * r2 + u64(h1) * r1 + u64(h2) * r0 + u64(h3) * s4 + u64(h4) * s3;
  u64 d3 = u64(h0) * r3 + u64(h1) * r2 + u64(h2) * r1 + u64(h3) * r0 + u64(h4) * s4;
  u64 d4 = u64(h0) * r4 + u64(h1) * r3 + u64(h2) * r2 + u64(h3) * r1 + u64(h4) * r0;
  uint32_t c = uint32_t(d0 >> 26);
  h0 = uint32_t(d0) & 0x3ffffff;
  d1 += c, c = uint32_t(d1 >> 26), h1 = uint32_t(d1) & 0x3ffffff;
  d2 += c, c = uint32_t(d2 >> 26), h2 = uint32_t(d2) & 0x3ffffff;
  d3 += c, c = uint32_t(d3 >> 26), h3 = uint32_t(d3) & 0x3ffffff;
  d4 += c, c = uint32_t(d4 >> 26), h4 = uint32_t(d4) & 0x3ffffff;
  h0 += c * 5, c = h0 >> 26, h0 &= 0x3ffffff;
  h1 += c;
  p.h[0] = h0, p.h[1] = h1, p.h[2] = h2, p.h[3] = h3, p.h[4] = h4;
}

KNOD_HD inline void poly1305_update(Poly1305& p, const uint8_t* m, uint32_t n) {
  while (n && p.fill) {
    p.buf[p.fill++] = *m++, --n;
    if (p.fill == 16) poly1305_block(p, p.buf, 1), p.fill = 0;
  }
  for (; n >= 16; m += 16, n -= 16) poly1305_block(p, m, 1);
  for (uint32_t i = 0; i < n; ++i) p.buf[p.fill++] = m[i];
}

/// Zero-pads the stream to a multiple of 16 bytes (the AEAD's pad16, RFC 8439 §2.8).
KNOD_HD inline void poly1305_pad16(Poly1305& p) {
  if (!p.fill) return;
  for (uint32_t i = p.fill; i < 16; ++i) p.buf[i] = 0;
  poly1305_block(p, p.buf, 1);
  p.fill = 0;
}

/// Writes the 16-byte tag. A trailing partial block gets the 0x01 byte (§2.5.1).
KNOD_HD inline void poly1305_final(Poly1305& p, uint8_t tag[16]) {
  if (p.fill) {
    p.buf[p.fill] = 1;
    for (uint32_t i = p.fill + 1; i < 16; ++i) p.buf[i] = 0;
    poly1305_block(p, p.buf, 0);
    p.fill = 0;
  }
  uint32_t h0 = p.h[0], h1 = p.h[1], h2 = p.h[2], h3 = p.h[3], h4 = p.h[4], c;
  c = h1 >> 26, h1 &= 0x3ffffff, h2 += c;
  c = h2 >> 26, h2 &= 0x3ffffff, h3 += c;
  c = h3 >> 26, h3 &= 0x3ffffff, h4 += c;
  c = h4 >> 26, h4 &= 0x3ffffff, h0 += c * 5;
  c = h0 >> 26, h0 &= 0x3ffffff, h1 += c;
  // g = h + 5 - 2^130; use g when it does not borrow (h >= p).
  uint32_t g0 = h0 + 5;
  c = g0 >> 26, g0 &= 0x3ffffff;
  uint32_t g1 = h1 + c;
  c = g1 >> 26, g1 &= 0x3ffffff;
  uint32_t g2 = h2 + c;
  c = g2 >> 26, g2 &= 0x3ffffff;
  uint32_t g3 = h3 + c;
  c = g3 >> 26, g3 &= 0x3ffffff;
  uint32_t g4 = h4 + c - (1u << 26);
  uint32_t mask = (g4 >> 31) - 1;  // all ones when g4 did not go negative
  h0 = (h0 & ~mask) | (g0 & mask), h1 = (h1 & ~mask) | (g1 & mask);
  h2 = (h2 & ~mask) | (g2 & mask), h3 = (h3 & ~mask) | (g3 & mask);
  h4 = (h4 & ~mask) | (g4 & mask);
  uint32_t w0 = h0 | (h1 << 26), w1 = (h1 >> 6) | (h2 << 20), w2 = (h2 >> 12) | (h3 << 14),
           w3 = (h3 >> 18) | (h4 << 8);
  uint64_t f = uint64_t(w0) + p.pad[0];
  store_le32(tag, uint32_t(f));
  f = uint64_t(w1) + p.pad[1] + (f >> 32);
  store_le32(tag + 4, uint32_t(f));
  f = uint64_t(w2) + p.pad[2] + (f >> 32);
  store_le32(tag + 8, uint32_t(f));
  f = uint64_t(w3) + p.pad[3] + (f >> 32);
  store_le32(tag + 12, uint32_t(f));
}

}  // namespace knod::xfrm::portable
