// csum_partial with 64-bit accumulation (any order of adding 16-bit words gives the same
// ones'-complement sum; lib/checksum.c do_csum).
#include "xdp/csum.h"

#include <cstring>

namespace knod::xdp {

uint32_t csum_partial(const void* buf, size_t len, uint32_t sum) {
  const auto* p = static_cast<const uint8_t*>(buf);
  uint64_t acc = sum;
  size_t i = 0;
  for (; i + 2 <= len; i += 2) {
    uint16_t w;
    std::memcpy(&w, p + i, 2);
    acc += w;
  }
  if (i < len) {
    uint8_t last[2] = {p[i], 0};
    uint16_t w;
    std::memcpy(&w, last, 2);
    acc += w;
  }
  while (acc >> 32) acc = (acc & 0xffffffffull) + (acc >> 32);
  return uint32_t(acc);
}

}  // namespace knod::xdp
