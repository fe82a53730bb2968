// Shared by the portable AEAD code (AES-GCM, ChaCha20-Poly1305), which compiles both for the
// host (g++/clang++) and for NVIDIA GPUs (clang CUDA, device side): no standard library, no
// exceptions, no allocation. KNOD_HD marks functions for both sides; KNOD_CONSTANT places
// lookup tables in the GPU's constant memory.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDA__) || defined(__CUDACC__)
#define KNOD_HD __attribute__((host, device))
#define KNOD_CONSTANT __attribute__((constant))
#define KNOD_ON_GPU 1
#else
#define KNOD_HD
#define KNOD_CONSTANT
#define KNOD_ON_GPU 0
#endif

namespace knod::xfrm::portable {

KNOD_HD inline uint32_t load_be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
KNOD_HD inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}
KNOD_HD inline uint64_t load_be64(const uint8_t* p) {
  return uint64_t(load_be32(p)) << 32 | load_be32(p + 4);
}
KNOD_HD inline void store_be64(uint8_t* p, uint64_t v) {
  store_be32(p, uint32_t(v >> 32)), store_be32(p + 4, uint32_t(v));
}
KNOD_HD inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[3]) << 24 | uint32_t(p[2]) << 16 | uint32_t(p[1]) << 8 | p[0];
}
KNOD_HD inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v >> 16), p[3] = uint8_t(v >> 24);
}
KNOD_HD inline uint32_t rotl32(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}
KNOD_HD inline uint32_t rotr32(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}
KNOD_HD inline void copy_bytes(uint8_t* d, const uint8_t* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = s[i];
}
KNOD_HD inline void zero_bytes(uint8_t* d, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = 0;
}
/// Constant-time equality of two `n`-byte strings (ICV compare, RFC 4303 §3.4.4).
KNOD_HD inline bool equal_ct(const uint8_t* a, const uint8_t* b, uint32_t n) {
  uint8_t d = 0;
  for (uint32_t i = 0; i < n; ++i) d = uint8_t(d | (a[i] ^ b[i]));
  return d == 0;
}

}  // namespace knod::xfrm::portable
