// IPv6 extension-header chains for transport-mode ESP (RFC 8200 §4.1 order, RFC 4303 §3.1.1):
// where the ESP header goes on output and where it is found on input. Inline, bounded,
// allocation-free (also compiled for the device through esp_out.cpp).
#pragma once

#include <cstdint>

#include "xfrm/ip.h"

namespace knod::xfrm {

constexpr uint8_t kNhHopByHop = 0, kNhRouting = 43, kNhFragment = 44, kNhDestOpts = 60;
/// Most extension headers a chain may hold before the ESP header (knod's bound; longer
/// chains are dropped as malformed: kMalformed).
constexpr uint32_t kIp6MaxExtHdrs = 8;

/// Bytes of the hop-by-hop / routing / destination-options header at `h` (RFC 8200 §4.3,
/// §4.4, §4.6: Hdr Ext Len in 8-octet units, not counting the first 8 octets).
inline uint32_t ip6_ext_len(const uint8_t* h) {
  return (uint32_t(h[1]) + 1) * 8;
}

/// Output, transport mode: where the kernel inserts ESP into the IPv6 packet `ip` of `len`
/// bytes (40 + payload length): ip6_find_1stfragopt (net/ipv6/output_core.c), used by
/// xfrm6_transport_output. Hop-by-hop and routing headers stay in front, and destination
/// options too unless they follow a routing header (those are for the final destination
/// and are encrypted); a fragment header or any other protocol ends the walk.
/// (CONFIG_IPV6_MIP6's Home Address option exception is not modelled: the oracle kernel
/// is built without it.)
/// Out: `off`, bytes from `ip` to where the ESP header goes (>= 40); `nh_off`, offset from
/// `ip` of the Next Header byte naming the protocol at `off` (6, or byte 0 of the last
/// header kept in front). Returns false for a truncated chain (a header past `len`) or one
/// of more than kIp6MaxExtHdrs headers.
inline bool ip6_transport_split(const uint8_t* ip, uint32_t len, uint32_t& off, uint32_t& nh_off) {
  off = kIpv6Hdr;
  nh_off = 6;
  bool routing = false;
  for (uint32_t n = 0;; ++n) {
    uint8_t nh = ip[nh_off];
    if (nh == kNhRouting)
      routing = true;
    else if ((nh == kNhDestOpts && routing) || (nh != kNhHopByHop && nh != kNhDestOpts))
      return true;
    if (n == kIp6MaxExtHdrs || off + 2 > len) return false;
    uint32_t hl = ip6_ext_len(ip + off);
    if (off + hl > len) return false;
    nh_off = off;
    off += hl;
  }
}

/// What an input walk of the extension headers stopped at (ip6_walk_ext).
enum class Ip6Walk : uint8_t {
  kUpper,     ///< a header that is not hop-by-hop, routing or destination options
  kFragment,  ///< a Fragment header (RFC 8200 §4.5): reassemble first (xfrm/reasm.h)
  kBad,       ///< truncated chain, hop-by-hop not first (§4.3), more than kIp6MaxExtHdrs
};

/// Input: walks the IPv6 extension headers of `ip` (`len` bytes, 40 + payload length) as the
/// kernel's receive path does (ip6_input: hop-by-hop first only; routing and
/// destination-options handlers in between; the fragment handler, ipv6_frag_rcv).
/// Out: `off`, bytes from `ip` to the header the walk stopped at; `nh_off`, offset of the
/// Next Header byte naming it. A routing header with Segments Left != 0 ends the walk there
/// as kUpper (`off` at it: the packet is routed on, not delivered here; RFC 8200 §4.4,
/// ipv6_rthdr_rcv).
inline Ip6Walk ip6_walk_ext(const uint8_t* ip, uint32_t len, uint32_t& off, uint32_t& nh_off) {
  off = kIpv6Hdr;
  nh_off = 6;
  for (uint32_t n = 0;; ++n) {
    uint8_t nh = ip[nh_off];
    if (nh == kNhHopByHop && n != 0) return Ip6Walk::kBad;
    if (nh == kNhFragment) return Ip6Walk::kFragment;
    if (nh != kNhHopByHop && nh != kNhRouting && nh != kNhDestOpts) return Ip6Walk::kUpper;
    if (n == kIp6MaxExtHdrs || off + 4 > len) return Ip6Walk::kBad;
    if (nh == kNhRouting && ip[off + 3] != 0) return Ip6Walk::kUpper;  // segments left
    uint32_t hl = ip6_ext_len(ip + off);
    if (off + hl > len) return Ip6Walk::kBad;
    nh_off = off;
    off += hl;
  }
}

/// Input: the header after the IPv6 extension headers of `ip` (where ip6_walk_ext reaches
/// kUpper): `off` and `nh_off` as there. Returns false for a bad chain or a fragment header
/// (fragments are reassembled before ESP input, xfrm/reasm.h; one that gets here is malformed).
inline bool ip6_skip_ext(const uint8_t* ip, uint32_t len, uint32_t& off, uint32_t& nh_off) {
  return ip6_walk_ext(ip, len, off, nh_off) == Ip6Walk::kUpper;
}

/// Offset of the UDP header of an ESP-in-UDP IPv6 packet `ip` (`len` bytes) that
/// esp_out_prepare wrote: after the extension headers kept in front (40 without any).
inline uint32_t ip6_udp_off(const uint8_t* ip, uint32_t len) {
  uint32_t off, nh_off;
  return ip6_skip_ext(ip, len, off, nh_off) ? off : kIpv6Hdr;
}

}  // namespace knod::xfrm
