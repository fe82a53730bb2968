// Bob Jenkins' lookup3 hash as the kernel implements it (include/linux/jhash.h), so that a hash
// map created with BPF_F_ZERO_SEED iterates in exactly the kernel's order.
#pragma once

#include <cstdint>
#include <cstring>

namespace knod::maps {

namespace jhash_detail {
constexpr uint32_t kInit = 0xdeadbeef;
inline uint32_t rol(uint32_t w, int s) {
  return (w << s) | (w >> (32 - s));
}
inline void mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c;
  a ^= rol(c, 4);
  c += b;
  b -= a;
  b ^= rol(a, 6);
  a += c;
  c -= b;
  c ^= rol(b, 8);
  b += a;
  a -= c;
  a ^= rol(c, 16);
  c += b;
  b -= a;
  b ^= rol(a, 19);
  a += c;
  c -= b;
  c ^= rol(b, 4);
  b += a;
}
inline void final(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b;
  c -= rol(b, 14);
  a ^= c;
  a -= rol(c, 11);
  b ^= a;
  b -= rol(a, 25);
  c ^= b;
  c -= rol(b, 16);
  a ^= c;
  a -= rol(c, 4);
  b ^= a;
  b -= rol(a, 14);
  c ^= b;
  c -= rol(b, 24);
}
}  // namespace jhash_detail

/// jhash(key, length bytes, initval).
[[gnu::always_inline]] inline uint32_t jhash(const void* key, uint32_t length, uint32_t initval) {
  using namespace jhash_detail;
  const uint8_t* k = static_cast<const uint8_t*>(key);
  uint32_t a, b, c;
  a = b = c = kInit + length + initval;
  while (length > 12) {
    uint32_t w[3];
    std::memcpy(w, k, 12);
    a += w[0];
    b += w[1];
    c += w[2];
    mix(a, b, c);
    length -= 12;
    k += 12;
  }
  switch (length) {
    case 12:
      c += uint32_t(k[11]) << 24;
      [[fallthrough]];
    case 11:
      c += uint32_t(k[10]) << 16;
      [[fallthrough]];
    case 10:
      c += uint32_t(k[9]) << 8;
      [[fallthrough]];
    case 9:
      c += k[8];
      [[fallthrough]];
    case 8:
      b += uint32_t(k[7]) << 24;
      [[fallthrough]];
    case 7:
      b += uint32_t(k[6]) << 16;
      [[fallthrough]];
    case 6:
      b += uint32_t(k[5]) << 8;
      [[fallthrough]];
    case 5:
      b += k[4];
      [[fallthrough]];
    case 4:
      a += uint32_t(k[3]) << 24;
      [[fallthrough]];
    case 3:
      a += uint32_t(k[2]) << 16;
      [[fallthrough]];
    case 2:
      a += uint32_t(k[1]) << 8;
      [[fallthrough]];
    case 1:
      a += k[0];
      final(a, b, c);
      break;
    default:
      break;
  }
  return c;
}

/// jhash2(k, length in 32-bit words, initval).
[[gnu::always_inline]] inline uint32_t jhash2(const void* key, uint32_t words, uint32_t initval) {
  using namespace jhash_detail;
  const uint8_t* k = static_cast<const uint8_t*>(key);
  uint32_t a, b, c;
  a = b = c = kInit + (words << 2) + initval;
  uint32_t w[3];
  while (words > 3) {
    std::memcpy(w, k, 12);
    a += w[0];
    b += w[1];
    c += w[2];
    mix(a, b, c);
    words -= 3;
    k += 12;
  }
  // The last 1-3 words one load each, as the kernel's jhash2 reads k[2], k[1], k[0]: a copy of
  // words * 4 bytes would be a memcpy call of variable size wherever the hash is not inlined.
  auto word = [k](int i) {
    uint32_t x;
    std::memcpy(&x, k + 4 * i, 4);
    return x;
  };
  switch (words) {
    case 3:
      c += word(2);
      [[fallthrough]];
    case 2:
      b += word(1);
      [[fallthrough]];
    case 1:
      a += word(0);
      final(a, b, c);
      break;
    default:
      break;
  }
  return c;
}

/// kernel htab_map_hash(): jhash2 for key sizes that are a multiple of 4, else jhash.
[[gnu::always_inline]] inline uint32_t htab_hash(const void* key, uint32_t key_len, uint32_t seed) {
  return (key_len & 3) == 0 ? jhash2(key, key_len / 4, seed) : jhash(key, key_len, seed);
}

}  // namespace knod::maps
