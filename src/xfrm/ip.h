// Minimal IPv4/IPv6/UDP header access for the ESP data path: byte-wise big-endian loads and
// stores (no alignment assumptions), RFC 1071 checksums. Inline, allocation-free.
#pragma once

#include <cstdint>
#include <cstring>

namespace knod::xfrm {

constexpr uint8_t kProtoIpip = 4, kProtoUdp = 17, kProtoIpv6 = 41, kProtoNone = 59;
constexpr uint32_t kIpv4Hdr = 20, kIpv6Hdr = 40, kUdpHdr = 8, kEspHdr = 8;
constexpr uint16_t kIpDf = 0x4000;  ///< IPv4 Don't Fragment bit in frag_off

/// Whether the `len` bytes at `l3` after an Ethernet `ethertype` are an IP packet of the version it
/// names (0x0800: 4, 0x86dd: 6); any other frame the kernel's ip_rcv / ipv6_rcv drop before
/// xfrm sees it (InHdrErrors).
inline bool ip_of_ethertype(uint16_t ethertype, const uint8_t* l3, uint32_t len) {
  return len &&
         ((ethertype == 0x0800 && l3[0] >> 4 == 4) || (ethertype == 0x86dd && l3[0] >> 4 == 6));
}

inline uint16_t ld16(const uint8_t* p) {
  return uint16_t(p[0] << 8 | p[1]);
}
inline uint32_t ld32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline void st16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8), p[1] = uint8_t(v);
}
inline void st32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

/// One's-complement sum of `len` bytes (RFC 1071), unfolded, added to `sum`.
inline uint32_t csum_add(uint32_t sum, const uint8_t* p, uint32_t len) {
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += ld16(p + i);
  if (len & 1) sum += uint32_t(p[len - 1]) << 8;
  return sum;
}
inline uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum);
}

/// Recomputes the IPv4 header checksum of the header at `ip` (ihl from the header).
inline void ipv4_set_csum(uint8_t* ip) {
  uint32_t ihl = (ip[0] & 15) * 4u;
  ip[10] = ip[11] = 0;
  st16(ip + 10, csum_fold(csum_add(0, ip, ihl)));
}

/// UDP checksum over IPv6 (mandatory there, RFC 8200 §8.1); `udp` holds header + payload.
inline uint16_t udp6_csum(const uint8_t* ip6, const uint8_t* udp, uint32_t len) {
  uint32_t s = csum_add(0, ip6 + 8, 32);
  s += len + kProtoUdp;
  s = csum_add(s, udp, len);
  uint16_t c = csum_fold(s);
  return c ? c : 0xffff;
}

/// Traffic class / TOS byte of an IP header (either version).
inline uint8_t ip_tos(const uint8_t* ip) {
  return (ip[0] >> 4) == 4 ? ip[1] : uint8_t((ip[0] & 15) << 4 | ip[1] >> 4);
}
inline void ip_set_tos(uint8_t* ip, uint8_t tos) {
  if ((ip[0] >> 4) == 4) {
    ip[1] = tos;
  } else {
    ip[0] = uint8_t(0x60 | tos >> 4);
    ip[1] = uint8_t((tos & 15) << 4 | (ip[1] & 15));
  }
}

}  // namespace knod::xfrm
