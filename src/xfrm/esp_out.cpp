// Outbound ESP, one packet (RFC 4303 §3.1, §3.3; RFC 3948 for UDP encapsulation).
#include <cstring>

#include "xfrm/esp.h"
#include "xfrm/ip.h"
#include "xfrm/ip6_ext.h"
#include "xfrm/tunnel.h"

namespace knod::xfrm {
namespace {

/// Checks the IP header at p; sets its header bytes and trims len to the IP total length.
Drop parse_ip(const uint8_t* p, uint32_t& len, uint32_t& hlen) {
  if (len < 1) return Drop::kShort;
  uint32_t v = p[0] >> 4;
  if (v == 4) {
    if (len < kIpv4Hdr) return Drop::kShort;
    hlen = (p[0] & 15) * 4u;
    uint32_t tot = ld16(p + 2);
    if (hlen < kIpv4Hdr || tot < hlen || tot > len) return Drop::kMalformed;
    len = tot;
  } else if (v == 6) {
    if (len < kIpv6Hdr) return Drop::kShort;
    hlen = kIpv6Hdr;
    uint32_t tot = kIpv6Hdr + ld16(p + 4);
    if (tot > len) return Drop::kMalformed;
    len = tot;
  } else {
    return Drop::kMalformed;
  }
  return Drop::kOk;
}

void write_outer(const SaConfig& sa, const uint8_t* inner, uint8_t* o, uint32_t total,
                 uint8_t proto, uint64_t seq) {
  uint8_t tos = encap_tos(ip_tos(inner), sa.flags);
  bool inner4 = (inner[0] >> 4) == 4;
  if (sa.src.family == 4) {
    uint16_t df = inner4 ? uint16_t(ld16(inner + 6) & kIpDf) : kIpDf;
    o[0] = 0x45;
    o[1] = tos;
    st16(o + 2, uint16_t(total));
    st16(o + 4, uint16_t(seq));  // IP ID
    st16(o + 6, encap_frag_off(df, sa.flags));
    o[8] = kTunnelTtl;
    o[9] = proto;
    std::memcpy(o + 12, sa.src.bytes, 4);
    std::memcpy(o + 16, sa.dst.bytes, 4);
    ipv4_set_csum(o);
  } else {
    uint32_t flow = inner4 ? 0 : (ld32(inner) & 0xfffff);
    st32(o, 0x60000000u | uint32_t(tos) << 20 | flow);
    st16(o + 4, uint16_t(total - kIpv6Hdr));
    o[6] = proto;
    o[7] = kTunnelTtl;
    std::memcpy(o + 8, sa.src.bytes, 16);
    std::memcpy(o + 24, sa.dst.bytes, 16);
  }
}

}  // namespace

namespace {

// Where everything goes; computed (and the packet checked) before anything is written.
struct Plan {
  uint32_t hlen = 0, nh_off = 0, outer_hlen = 0, payload = 0, iv = 0, udp = 0, padded = 0, pad = 0,
           front = 0;
  uint8_t nh = 0;
  bool tunnel = false;
};

Drop plan_out(const SaConfig& sa, const uint8_t* p, uint32_t cap, uint32_t off, uint32_t len,
              Plan& x) {
  if (Drop d = parse_ip(p, len, x.hlen); d != Drop::kOk) return d;
  x.tunnel = sa.mode == Mode::kTunnel;
  bool v4in = (p[0] >> 4) == 4;
  if (!x.tunnel && (v4in ? 4 : 6) != sa.src.family) return Drop::kMalformed;
  // Transport: the headers kept in front of ESP (IPv6: the kernel's split of the extension
  // headers) and the Next Header byte that will name ESP (or UDP) instead.
  x.nh_off = v4in ? 9 : 6;
  if (!x.tunnel && !v4in && !ip6_transport_split(p, len, x.hlen, x.nh_off)) return Drop::kMalformed;
  x.outer_hlen = x.tunnel ? (sa.src.family == 4 ? kIpv4Hdr : kIpv6Hdr) : x.hlen;
  x.payload = x.tunnel ? len : len - x.hlen;
  x.nh = x.tunnel ? (v4in ? kProtoIpip : kProtoIpv6) : p[x.nh_off];
  x.iv = sa.iv_len(), x.udp = sa.encap ? kUdpHdr : 0;
  const uint32_t align = sa.align();
  x.padded = (x.payload + 2 + align - 1) / align * align;
  x.pad = x.padded - x.payload - 2;
  // New layout: [outer IP][UDP][ESP][IV][payload][pad][pad len][NH][ICV].
  x.front = x.tunnel ? x.outer_hlen + x.udp + kEspHdr + x.iv : x.udp + kEspHdr + x.iv;
  const uint32_t tail = x.pad + 2 + sa.icv_len;
  if (off < x.front || off + len + tail > cap) return Drop::kTooBig;
  return Drop::kOk;
}

}  // namespace

Drop esp_out_check(const SaConfig& sa, const uint8_t* slot, uint32_t cap, uint32_t off,
                   uint32_t len) {
  Plan x;
  return plan_out(sa, slot + off, cap, off, len, x);
}

Drop esp_out_prepare(const SaConfig& sa, uint32_t sa_index, uint64_t seq, uint8_t* slot,
                     uint32_t cap, uint32_t& off, uint32_t& len, CryptoOp& op) {
  uint8_t* p = slot + off;
  Plan x;
  if (Drop d = plan_out(sa, p, cap, off, len, x); d != Drop::kOk) return d;
  const uint32_t hlen = x.hlen, nh_off = x.nh_off, outer_hlen = x.outer_hlen, payload = x.payload,
                 iv = x.iv, udp = x.udp, padded = x.padded, pad = x.pad, front = x.front;
  const uint8_t nh = x.nh;
  const bool tunnel = x.tunnel;
  uint8_t* start = p - front;
  uint8_t* pl = p + (tunnel ? 0 : hlen);  // payload stays where it is
  if (!tunnel) std::memmove(start, p, hlen);
  uint8_t* t = pl + payload;
  for (uint32_t i = 0; i < pad; ++i) t[i] = uint8_t(i + 1);  // RFC 4303 §2.4 default pad
  t[pad] = uint8_t(pad);
  t[pad + 1] = nh;
  uint32_t total = outer_hlen + udp + kEspHdr + iv + padded + sa.icv_len;
  uint8_t proto = sa.encap ? kProtoUdp : kProtoEsp;
  if (tunnel) {
    write_outer(sa, p, start, total, proto, seq);
  } else if (sa.src.family == 4) {
    st16(start + 2, uint16_t(total));
    start[9] = proto;
    ipv4_set_csum(start);
  } else {
    st16(start + 4, uint16_t(total - kIpv6Hdr));
    start[nh_off] = proto;
  }
  uint8_t* esp = start + outer_hlen + udp;
  st32(esp, sa.spi);
  st32(esp + 4, uint32_t(seq));
  uint8_t* ivp = esp + kEspHdr;
  if (sa.aead()) {
    st32(ivp, uint32_t(seq >> 32));
    st32(ivp + 4, uint32_t(seq));
  }
  op = CryptoOp{};
  op.sa = sa_index;
  op.iv = ivp;
  op.data = pl;
  op.len = sa.cipher == Cipher::kAesGmac ? 0 : padded;
  op.icv = pl + padded;
  op.esn = sa.esn();
  op.seq_hi = uint32_t(seq >> 32);
  st32(op.aad, sa.spi);
  if (op.esn) {
    st32(op.aad + 4, op.seq_hi), st32(op.aad + 8, uint32_t(seq)), op.aad_len = 12;
  } else {
    st32(op.aad + 4, uint32_t(seq)), op.aad_len = 8;
  }
  if (sa.cipher == Cipher::kAesGmac) {
    op.aad2 = ivp, op.aad2_len = iv + padded;
  } else {
    op.auth = esp, op.auth_len = kEspHdr + iv + padded;
  }
  if (udp) {
    uint8_t* u = start + outer_hlen;
    uint32_t ulen = total - outer_hlen;
    st16(u, sa.encap_sport);
    st16(u + 2, sa.encap_dport);
    st16(u + 4, uint16_t(ulen));
    st16(u + 6, 0);  // RFC 3948 §2.1: zero on IPv4; IPv6 checksum set after encryption
  }
  off = uint32_t(start - slot);
  len = total;
  return Drop::kOk;
}

}  // namespace knod::xfrm
