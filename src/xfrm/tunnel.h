// Tunnel-mode header rules, as Linux xfrm applies them (net/xfrm/xfrm_output.c,
// xfrm_input.c) with ECN per RFC 6040 (normal mode). Inline: callable from device code.
#pragma once

#include <cstdint>

#include "xfrm/sa.h"

namespace knod::xfrm {

constexpr uint8_t kEcnMask = 3, kEcnCe = 3, kEcnEct0 = 2;
constexpr uint8_t kTunnelTtl = 64;  ///< outer TTL / hop limit (Linux ip4_dst_hoplimit default)

/// Outer TOS/traffic class from the inner one: DSCP copied unless extra-flag dont-encap-dscp;
/// ECN copied, CE becoming ECT(0) (INET_ECN_encapsulate); cleared with flag noecn.
inline uint8_t encap_tos(uint8_t inner, uint32_t flags) {
  uint8_t dscp = (flags & kXFlagDontEncapDscp) ? 0 : uint8_t(inner & ~kEcnMask);
  uint8_t ecn = (inner & kEcnMask) == kEcnCe ? kEcnEct0 : uint8_t(inner & kEcnMask);
  if (flags & kFlagNoEcn) ecn = 0;
  return uint8_t(dscp | ecn);
}

/// Inner TOS after decapsulation: outer CE marks an ECT inner packet CE (unless noecn);
/// flag decap-dscp copies the outer DSCP into the inner header.
inline uint8_t decap_tos(uint8_t outer, uint8_t inner, uint32_t flags) {
  if (!(flags & kFlagNoEcn) && (outer & kEcnMask) == kEcnCe && (inner & kEcnMask) != 0)
    inner = uint8_t(inner | kEcnCe);
  if (flags & kFlagDecapDscp) inner = uint8_t((outer & ~kEcnMask) | (inner & kEcnMask));
  return inner;
}

/// Outer IPv4 frag_off: the inner DF bit (IPv6 inner: DF), 0 with flag nopmtudisc.
inline uint16_t encap_frag_off(uint16_t inner_df, uint32_t flags) {
  return (flags & kFlagNoPmtuDisc) ? 0 : inner_df;
}

}  // namespace knod::xfrm
