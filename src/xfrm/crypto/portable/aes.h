// AES block encryption (FIPS 197) with 32-bit T-tables, for AES-128/192/256. Only the
// forward cipher: GCM needs no inverse cipher. Table lookups depend on key and data (not
// constant time, like any table AES); the tables come in as a parameter so a GPU kernel can
// pass a shared-memory copy.
#pragma once

#include "xfrm/crypto/portable/tables.h"

namespace knod::xfrm::portable {

/// Expanded key: 4 * (rounds + 1) words (FIPS 197 §5.2), rounds 10, 12 or 14.
struct AesKey {
  uint32_t rk[60];
  uint32_t rounds;
};

/// Expands a 16-, 24- or 32-byte key. Returns false for any other length.
KNOD_HD inline bool aes_expand(AesKey& k, const uint8_t* key, uint32_t len, const Tables& t) {
  if (len != 16 && len != 24 && len != 32) return false;
  uint32_t nk = len / 4;
  k.rounds = nk + 6;
  uint32_t total = 4 * (k.rounds + 1);
  for (uint32_t i = 0; i < nk; ++i) k.rk[i] = load_be32(key + 4 * i);
  uint32_t rcon = 1;
  for (uint32_t i = nk; i < total; ++i) {
    uint32_t w = k.rk[i - 1];
    auto sub = [&](uint32_t v) {
      return uint32_t(t.sbox[v >> 24]) << 24 | uint32_t(t.sbox[(v >> 16) & 255]) << 16 |
             uint32_t(t.sbox[(v >> 8) & 255]) << 8 | t.sbox[v & 255];
    };
    if (i % nk == 0) {
      w = sub(rotl32(w, 8)) ^ (rcon << 24);
      rcon = (rcon << 1) ^ ((rcon & 0x80) ? 0x1b : 0);
    } else if (nk > 6 && i % nk == 4) {
      w = sub(w);
    }
    k.rk[i] = k.rk[i - nk] ^ w;
  }
  return true;
}

/// Encrypts one 16-byte block `in` to `out` (may alias).
KNOD_HD inline void aes_encrypt(const AesKey& k, const uint32_t* te0, const uint8_t* sbox,
                                const uint8_t* in, uint8_t* out) {
  const uint32_t* rk = k.rk;
  uint32_t s0 = load_be32(in) ^ rk[0], s1 = load_be32(in + 4) ^ rk[1],
           s2 = load_be32(in + 8) ^ rk[2], s3 = load_be32(in + 12) ^ rk[3];
  auto T = [te0](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return te0[a >> 24] ^ rotr32(te0[(b >> 16) & 255], 8) ^ rotr32(te0[(c >> 8) & 255], 16) ^
           rotr32(te0[d & 255], 24);
  };
  for (uint32_t r = 1; r < k.rounds; ++r) {
    rk += 4;
    uint32_t t0 = T(s0, s1, s2, s3) ^ rk[0], t1 = T(s1, s2, s3, s0) ^ rk[1],
             t2 = T(s2, s3, s0, s1) ^ rk[2], t3 = T(s3, s0, s1, s2) ^ rk[3];
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  rk += 4;
  auto F = [sbox](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return uint32_t(sbox[a >> 24]) << 24 | uint32_t(sbox[(b >> 16) & 255]) << 16 |
           uint32_t(sbox[(c >> 8) & 255]) << 8 | sbox[d & 255];
  };
  store_be32(out, F(s0, s1, s2, s3) ^ rk[0]);
  store_be32(out + 4, F(s1, s2, s3, s0) ^ rk[1]);
  store_be32(out + 8, F(s2, s3, s0, s1) ^ rk[2]);
  store_be32(out + 12, F(s3, s0, s1, s2) ^ rk[3]);
}

}  // namespace knod::xfrm::portable
