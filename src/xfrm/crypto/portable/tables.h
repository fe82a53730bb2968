// Lookup tables of the portable AEAD code, computed at compile time (no hand-typed constants):
// the AES S-box and the combined SubBytes+MixColumns table Te0 (FIPS 197 §5.1; Te1..Te3 are
// its byte rotations), and the GHASH 4-bit reduction table (NIST SP 800-38D §6.3, Shoup's
// method). On the GPU they live in constant memory (kernels may copy them to shared memory).
#pragma once

#include "xfrm/crypto/portable/hd.h"

namespace knod::xfrm::portable {

struct Tables {
  uint32_t te0[256];       ///< Te0[x] = {2·S[x], S[x], S[x], 3·S[x]} as a big-endian word
  uint8_t sbox[256];       ///< AES S-box (FIPS 197 §5.1.1)
  uint64_t ghash_rem[16];  ///< high word added when 4 bits leave the GHASH register
};

namespace detail {

constexpr uint8_t xtime(uint8_t a) {
  return uint8_t((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
}
constexpr Tables make_tables() {
  Tables t{};
  // Inverses via powers of the generator 3: exp[i] = 3^i, log[exp[i]] = i, x^-1 = 3^(255-log x).
  uint8_t exp[256] = {}, log[256] = {};
  uint8_t v = 1;
  for (int i = 0; i < 255; ++i) exp[i] = v, log[v] = uint8_t(i), v = uint8_t(v ^ xtime(v));
  for (int x = 0; x < 256; ++x) {
    uint8_t inv = x ? exp[(255 - log[x]) % 255] : 0;
    uint8_t s = inv;
    for (int i = 1; i <= 4; ++i) s ^= uint8_t((inv << i) | (inv >> (8 - i)));
    s ^= 0x63;
    t.sbox[x] = s;
    t.te0[x] =
        uint32_t(xtime(s)) << 24 | uint32_t(s) << 16 | uint32_t(s) << 8 | uint8_t(xtime(s) ^ s);
  }
  // GHASH: multiplying by x^4 shifts the 128-bit register right by 4; the bits that leave
  // (r, the low nibble) come back reduced modulo x^128 + x^7 + x^2 + x + 1 (R = 0xe1 || 0).
  for (int r = 0; r < 16; ++r) {
    uint64_t hi = 0, lo = uint64_t(r);
    for (int i = 0; i < 4; ++i) {
      bool out = lo & 1;
      lo = (lo >> 1) | (hi << 63);
      hi >>= 1;
      if (out) hi ^= 0xe100000000000000ull;
    }
    t.ghash_rem[r] = hi;
  }
  return t;
}

}  // namespace detail

#if KNOD_ON_GPU
KNOD_CONSTANT inline constexpr Tables kTables = detail::make_tables();
#else
inline constexpr Tables kTables = detail::make_tables();
#endif

}  // namespace knod::xfrm::portable
