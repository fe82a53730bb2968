// Inbound ESP, one packet (RFC 4303 §3.4; RFC 3948 §3 for UDP-encapsulated ESP).
#include <cstring>

#include "xfrm/esn.h"
#include "xfrm/esp.h"
#include "xfrm/ip.h"
#include "xfrm/ip6_ext.h"
#include "xfrm/tunnel.h"

namespace knod::xfrm {
namespace {

/// Window pre-check of a full sequence number (RFC 4303 §3.4.3), as Linux's
/// xfrm_replay_check_legacy/_bmp: replay-window 0 checks nothing (every number passes, 0 and
/// repeats included; never with ESN: Sad::add refuses it); otherwise seq 0 is never valid
/// without ESN.
Drop window_check(const SaConfig& c, const ReplayState& r, uint64_t seq) {
  if (c.replay_window == 0) return Drop::kOk;
  if (!c.esn() && seq == 0) return Drop::kReplay;
  switch (replay_check(r, seq)) {
    case ReplayCheck::kOk:
      return Drop::kOk;
    case ReplayCheck::kReplay:
      return Drop::kReplay;
    case ReplayCheck::kTooOld:
      return Drop::kTooOld;
  }
  return Drop::kReplay;
}

}  // namespace

Drop esp_in_prepare(const Sad& sad, uint8_t* slot, uint32_t off, uint32_t len, Sa*& sa,
                    PktState& st, CryptoOp& op, uint64_t* batch_top, bool* unsettled) {
  sa = nullptr;
  uint8_t* p = slot + off;
  if (len < kIpv4Hdr) return Drop::kShort;
  Addr dst;
  uint32_t hlen, tot, nh_off;
  uint8_t proto;
  if ((p[0] >> 4) == 4) {
    hlen = (p[0] & 15) * 4u;
    tot = ld16(p + 2);
    nh_off = 9;
    proto = p[9];
    // A fragment is reassembled before ESP input (xfrm/reasm.h); one that gets here is malformed.
    if ((ld16(p + 6) & 0x3fff) != 0) return Drop::kMalformed;
    dst.family = 4;
    std::memcpy(dst.bytes, p + 16, 4);
  } else if ((p[0] >> 4) == 6) {
    if (len < kIpv6Hdr) return Drop::kShort;
    tot = kIpv6Hdr + ld16(p + 4);
    if (tot > len) return Drop::kMalformed;
    // ESP (or UDP) after the extension headers; a bad chain is a counted drop.
    if (!ip6_skip_ext(p, tot, hlen, nh_off)) return Drop::kMalformed;
    proto = p[nh_off];
    dst.family = 6;
    std::memcpy(dst.bytes, p + 24, 16);
  } else {
    return Drop::kMalformed;
  }
  if (hlen < kIpv4Hdr || tot < hlen || tot > len) return Drop::kMalformed;
  uint32_t udp = 0;
  if (proto == kProtoUdp) {
    // Only UDP to an encapsulation port carries ESP (the kernel's encap socket); RFC 3948 §2.2:
    // there, a zero non-ESP marker is IKE, a lone 0xff byte a NAT keepalive.
    if (tot < hlen + kUdpHdr || !sad.encap_port(ld16(p + hlen + 2))) return Drop::kNotEsp;
    if (tot < hlen + kUdpHdr + kEspHdr || ld32(p + hlen + kUdpHdr) == 0) return Drop::kNotEsp;
    udp = kUdpHdr;
  } else if (proto != kProtoEsp) {
    return Drop::kNotEsp;
  }
  uint8_t* esp = p + hlen + udp;
  if (tot < hlen + udp + kEspHdr) return Drop::kShort;
  uint32_t spi = ld32(esp);
  sa = sad.find(spi, dst, kProtoEsp);
  if (!sa || sa->cfg.encap != (udp != 0)) {
    sa = nullptr;
    return Drop::kUnknownSpi;
  }
  const SaConfig& c = sa->cfg;
  uint32_t esp_len = tot - hlen - udp, iv = c.iv_len();
  if (esp_len < kEspHdr + iv + 2 + c.icv_len) return Drop::kShort;
  uint32_t clen = esp_len - kEspHdr - iv - c.icv_len;
  if (clen & (c.align() - 1)) return Drop::kMalformed;  // RFC 4303 §2.4 (align: 4, 8 or 16)
  uint32_t lo = ld32(esp + 4);
  const uint64_t top = sa->replay.top;
  st.seq = lo;
  if (c.esn()) {
    st.seq = esn_infer(top, c.replay_window, lo);
    // Inferred from the batch's highest number too: the same bits for any window between the
    // two tops (the inference only ever moves up with the top), so none of the packets before
    // this one can change them. Else they can: the caller settles those first.
    if (batch_top && batch_top[sa->index] > top) {
      const uint64_t ahead = esn_infer(batch_top[sa->index], c.replay_window, lo);
      if (ahead != st.seq && unsettled) {
        *unsettled = true;
        return Drop::kOk;
      }
      st.seq = ahead;
    }
  }
  if (Drop d = window_check(c, sa->replay, st.seq); d != Drop::kOk) return d;
  if (batch_top && st.seq > batch_top[sa->index]) batch_top[sa->index] = st.seq;
  st.esp_off = uint32_t(esp - slot);
  st.ip_len = hlen;
  st.nh_off = nh_off;
  st.udp_len = udp;
  op = CryptoOp{};
  op.sa = sa->index;
  op.iv = esp + kEspHdr;
  op.data = op.iv + iv;
  op.len = c.cipher == Cipher::kAesGmac ? 0 : clen;
  op.icv = op.data + clen;
  op.esn = c.esn();
  op.seq_hi = uint32_t(st.seq >> 32);
  st32(op.aad, spi);
  if (op.esn) {
    st32(op.aad + 4, op.seq_hi), st32(op.aad + 8, lo), op.aad_len = 12;
  } else {
    st32(op.aad + 4, lo), op.aad_len = 8;
  }
  if (c.cipher == Cipher::kAesGmac) {
    op.aad2 = op.iv, op.aad2_len = iv + clen;
  } else {
    op.auth = esp, op.auth_len = kEspHdr + iv + clen;
  }
  return Drop::kOk;
}

Drop esp_in_finish(Sa& sa, uint8_t* slot, uint32_t& off, uint32_t& len, const PktState& st,
                   const CryptoOp& op) {
  const SaConfig& c = sa.cfg;
  // The kernel's order (xfrm_input): replay check, lifetime, then the ICV. Re-check against
  // the window as it is now (an earlier packet of the batch may have moved it); advance only
  // with the sequence number the ICV authenticated.
  if (Drop d = window_check(c, sa.replay, st.seq); d != Drop::kOk) return d;
  bool soft;
  if (!lifetime_admit(sa, sa.stats.c.packets, sa.stats.c.bytes, soft)) return Drop::kLimit;
  if (!op.ok) return Drop::kIntegrity;
  if (c.replay_window != 0) replay_advance(sa.replay, st.seq);  // 0: xfrm_replay_advance returns
  uint32_t clen = uint32_t(op.icv - op.data);
  uint8_t* data = op.data;
  uint8_t padlen = data[clen - 1 - 1], nh = data[clen - 1];
  if (uint32_t(padlen) + 2 > clen) return Drop::kBadPadding;
  for (uint32_t i = 0; i < padlen; ++i)
    if (data[clen - 2 - padlen + i] != uint8_t(i + 1)) return Drop::kBadPadding;
  if (nh == kProtoNone) return Drop::kDummy;
  uint32_t plen = clen - 2 - padlen;
  uint8_t* outer = slot + off;
  if (c.mode == Mode::kTunnel) {
    if (nh != kProtoIpip && nh != kProtoIpv6) return Drop::kMalformed;
    uint32_t v = nh == kProtoIpip ? 4 : 6, need = v == 4 ? kIpv4Hdr : kIpv6Hdr;
    if (plen < need || (data[0] >> 4) != v) return Drop::kMalformed;
    uint32_t ilen = v == 4 ? ld16(data + 2) : kIpv6Hdr + ld16(data + 4);
    if (ilen > plen) return Drop::kMalformed;
    uint8_t tos = decap_tos(ip_tos(outer), ip_tos(data), c.flags);
    if (tos != ip_tos(data)) {
      uint16_t was = ld16(data);
      ip_set_tos(data, tos);
      // IPv4: incremental checksum update for the changed word (RFC 1624 eqn. 3), as the
      // kernel's ipv4_change_dsfield does; an inner header is otherwise left as it came.
      if (v == 4)
        st16(data + 10,
             csum_fold(uint32_t(uint16_t(~ld16(data + 10))) + uint16_t(~was) + ld16(data)));
    }
    off = uint32_t(data - slot);
    len = ilen;
  } else {
    uint32_t hlen = st.ip_len;
    uint8_t* start = data - hlen;
    std::memmove(start, outer, hlen);
    if ((start[0] >> 4) == 4) {
      st16(start + 2, uint16_t(hlen + plen));
      start[9] = nh;
      ipv4_set_csum(start);
    } else {
      st16(start + 4, uint16_t(hlen - kIpv6Hdr + plen));
      start[st.nh_off] = nh;  // the last header kept names what ESP carried
    }
    off = uint32_t(start - slot);
    len = hlen + plen;
  }
  return Drop::kOk;
}

}  // namespace knod::xfrm
