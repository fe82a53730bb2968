// Test helpers: hex, packet builders (IPv4/IPv6/UDP), and a PacketBatch over owned memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xfrm/esp.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::xfrm::test {

using Bytes = std::vector<uint8_t>;

inline Bytes hex(std::string s) {
  Bytes out;
  std::string h;
  for (char c : s)
    if (isxdigit(uint8_t(c))) h.push_back(c);
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(uint8_t(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

/// IPv4 packet: 20-byte header (id 0x1234, ttl 64), `tos`, DF when `df`.
inline Bytes ipv4(const char* src, const char* dst, uint8_t proto, const Bytes& payload,
                  uint8_t tos = 0, bool df = false) {
  Bytes p(20 + payload.size());
  p[0] = 0x45, p[1] = tos;
  st16(&p[2], uint16_t(p.size()));
  st16(&p[4], 0x1234);
  st16(&p[6], df ? kIpDf : 0);
  p[8] = 64, p[9] = proto;
  Addr s = parse_addr(src), d = parse_addr(dst);
  std::copy(s.bytes, s.bytes + 4, &p[12]);
  std::copy(d.bytes, d.bytes + 4, &p[16]);
  ipv4_set_csum(p.data());
  std::copy(payload.begin(), payload.end(), p.begin() + 20);
  return p;
}

inline Bytes ipv6(const char* src, const char* dst, uint8_t nh, const Bytes& payload,
                  uint8_t tclass = 0, uint32_t flow = 0) {
  Bytes p(40 + payload.size());
  st32(&p[0], 0x60000000u | uint32_t(tclass) << 20 | flow);
  st16(&p[4], uint16_t(payload.size()));
  p[6] = nh, p[7] = 64;
  Addr s = parse_addr(src), d = parse_addr(dst);
  std::copy(s.bytes, s.bytes + 16, &p[8]);
  std::copy(d.bytes, d.bytes + 16, &p[24]);
  std::copy(payload.begin(), payload.end(), p.begin() + 40);
  return p;
}

inline Bytes udp(uint16_t sport, uint16_t dport, const Bytes& data) {
  Bytes u(8 + data.size());
  st16(&u[0], sport), st16(&u[2], dport), st16(&u[4], uint16_t(u.size()));
  std::copy(data.begin(), data.end(), u.begin() + 8);
  return u;
}

inline Bytes counting(size_t n, uint8_t start = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(start + i);
  return b;
}

/// Owns frames and per-packet arrays; packets start at `headroom`.
struct TestBatch {
  static constexpr uint32_t kStride = 4096, kHeadroom = 256;
  Bytes frames;
  std::vector<uint32_t> off, len, sa;
  Bytes drop;
  PacketBatch b;
  explicit TestBatch(const std::vector<Bytes>& pkts) {
    uint32_t n = uint32_t(pkts.size());
    frames.assign(size_t(n) * kStride, 0);
    off.assign(n, kHeadroom), len.assign(n, 0), sa.assign(n, kNoSaIndex), drop.assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      std::copy(pkts[i].begin(), pkts[i].end(), frames.begin() + size_t(i) * kStride + kHeadroom);
      len[i] = uint32_t(pkts[i].size());
    }
    b = PacketBatch{n, kStride, frames.data(), off.data(), len.data(), drop.data(), sa.data()};
  }
  Bytes packet(uint32_t i) const {
    auto* p = frames.data() + size_t(i) * kStride + off[i];
    return Bytes(p, p + len[i]);
  }
  Drop result(uint32_t i) const { return Drop(drop[i]); }
};

/// Parses one `ip xfrm state add` line.
inline SaConfig state(const std::string& line) {
  XfrmConfig c;
  parse_line(line, c);
  return c.states.at(0);
}

}  // namespace knod::xfrm::test
