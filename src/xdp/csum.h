// The Internet checksum arithmetic of the kernel (include/net/checksum.h, lib/checksum.c):
// 32-bit partial sums ("__wsum") with end-around carry. Used by bpf_csum_diff.
#pragma once

#include <cstddef>
#include <cstdint>

namespace knod::xdp {

/// csum_partial(buf, len, sum): the ones'-complement sum of buf read as 16-bit words in
/// memory order (a final odd byte padded with zero), added to `sum`; a 32-bit partial sum.
uint32_t csum_partial(const void* buf, size_t len, uint32_t sum);
/// csum_add: 32-bit addition with end-around carry.
inline uint32_t csum_add(uint32_t a, uint32_t b) {
  uint32_t r = a + b;
  return r + (r < b);
}
/// csum_sub(a, b) = csum_add(a, ~b).
inline uint32_t csum_sub(uint32_t a, uint32_t b) {
  return csum_add(a, ~b);
}
/// csum_from32to16: folds a 32-bit partial sum to 16 bits (not complemented).
inline uint16_t csum_from32to16(uint32_t x) {
  x += (x >> 16) | (x << 16);
  return uint16_t(x >> 16);
}

}  // namespace knod::xdp
