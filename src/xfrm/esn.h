// Extended Sequence Numbers: infer the high 32 bits the sender did not send
// (RFC 4303 Appendix A2.2). Inline, allocation-free: callable from device code.
#pragma once

#include <cstdint>

namespace knod::xfrm {

/// Returns the full 64-bit sequence number for the received low 32 bits `seq_lo`, given the
/// window's highest accepted number `top` and window size `window` packets (W; 0 acts as 1).
inline uint64_t esn_infer(uint64_t top, uint32_t window, uint32_t seq_lo) {
  uint32_t tl = uint32_t(top), th = uint32_t(top >> 32);
  uint32_t w = window ? window : 1;
  uint32_t bottom = tl - w + 1;  // mod 2^32
  uint32_t hi;
  if (tl >= w - 1) {  // Case A: window within one subspace
    hi = seq_lo >= bottom ? th : th + 1;
  } else {                                          // Case B: window spans two subspaces
    hi = seq_lo >= bottom && th > 0 ? th - 1 : th;  // no subspace below 0 (fresh SA)
  }
  return (uint64_t(hi) << 32) | seq_lo;
}

}  // namespace knod::xfrm
