#include "edge_packets.h"

#include <arpa/inet.h>

#include <array>
#include <cstring>

namespace knod::diff {
namespace {

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

constexpr Mac kClientMac = {2, 0, 0, 0, 0, 1};
constexpr Mac kServerMac = {2, 0, 0, 0, 0, 2};
constexpr uint16_t kIPv4 = 0x0800, kIPv6 = 0x86dd, kArp = 0x0806, kVlan = 0x8100, kQinQ = 0x88a8;
constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmp6 = 58;
constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08;

void put16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}
void put32(Bytes& b, uint32_t v) {
  put16(b, uint16_t(v >> 16));
  put16(b, uint16_t(v));
}
// Element by element: GCC 12 reports false -Warray-bounds for vector::insert of short ranges.
template <typename Range>
void append(Bytes& b, const Range& tail) {
  for (uint8_t c : tail) b.push_back(c);
}

// RFC 1071 one's-complement sum, not folded.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t s = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) s += uint32_t(p[i]) << 8 | p[i + 1];
  if (n & 1) s += uint32_t(p[n - 1]) << 8;
  return s;
}
uint16_t csum(uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s);
}

Bytes v4(const char* a) {
  Bytes b(4);
  inet_pton(AF_INET, a, b.data());
  return b;
}
Bytes v6(const char* a) {
  Bytes b(16);
  inet_pton(AF_INET6, a, b.data());
  return b;
}

Bytes payload(size_t n, uint8_t seed = 0x41) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(seed + i * 7);
  return b;
}

// Ethernet header with `tags` 802.1Q/802.1ad tags (TPID, VID) in front of `type`.
Bytes eth(uint16_t type, const std::vector<std::pair<uint16_t, uint16_t>>& tags = {},
          Mac dst = kServerMac, Mac src = kClientMac) {
  Bytes b;
  append(b, dst);
  append(b, src);
  for (auto [tpid, vid] : tags) {
    put16(b, tpid);
    put16(b, vid);
  }
  put16(b, type);
  return b;
}

struct L4 {
  uint8_t proto;
  Bytes bytes;      // header + payload, checksum field zero
  size_t csum_off;  // offset of the checksum field in bytes; SIZE_MAX: none
};

L4 tcp(uint16_t sport, uint16_t dport, uint8_t flags, size_t n = 0, uint32_t seq = 1000) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put32(b, seq);
  put32(b, flags & kAck ? 5000 : 0);
  b.push_back(5 << 4);
  b.push_back(flags);
  put16(b, 64240);
  put16(b, 0);  // checksum
  put16(b, 0);  // urgent
  append(b, payload(n));
  return {kTcp, b, 16};
}
L4 udp(uint16_t sport, uint16_t dport, size_t n = 0) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put16(b, uint16_t(8 + n));
  put16(b, 0);
  append(b, payload(n, 0x30));
  return {kUdp, b, 6};
}
L4 icmp_echo(bool v6, size_t n, uint16_t id = 0x1234, uint16_t seq = 1) {
  Bytes b;
  append(b, std::array<uint8_t, 4>{uint8_t(v6 ? 128 : 8), 0, 0, 0});
  put16(b, id);
  put16(b, seq);
  append(b, payload(n, 0x61));
  return {uint8_t(v6 ? kIcmp6 : kIcmp), b, 2};
}

// Fills the L4 checksum (pseudo-header per RFC 793 / RFC 768 / RFC 8200 8.1; ICMPv4 none).
void l4_csum(L4& l4, const Bytes& src, const Bytes& dst) {
  if (l4.csum_off == SIZE_MAX) return;
  uint32_t s = 0;
  if (!(l4.proto == kIcmp)) {
    s = sum16(src.data(), src.size(), s);
    s = sum16(dst.data(), dst.size(), s);
    s += l4.proto;
    s += uint32_t(l4.bytes.size() >> 16) + uint32_t(l4.bytes.size() & 0xffff);
  }
  uint16_t c = csum(sum16(l4.bytes.data(), l4.bytes.size(), s));
  if (l4.proto == kUdp && c == 0) c = 0xffff;
  l4.bytes[l4.csum_off] = uint8_t(c >> 8);
  l4.bytes[l4.csum_off + 1] = uint8_t(c);
}

// The checksum `l4` gets over the pseudo-header of src/dst, before RFC 768's zero rule.
uint16_t raw_csum(const L4& l4, const Bytes& src, const Bytes& dst) {
  L4 t = l4;
  t.bytes[t.csum_off] = t.bytes[t.csum_off + 1] = 0;
  uint32_t s = 0;
  if (t.proto != kIcmp) {
    s = sum16(src.data(), src.size(), s);
    s = sum16(dst.data(), dst.size(), s);
    s += t.proto;
    s += uint32_t(t.bytes.size() >> 16) + uint32_t(t.bytes.size() & 0xffff);
  }
  return csum(sum16(t.bytes.data(), t.bytes.size(), s));
}

// Sets the 16-bit word at byte `at` of l4's payload area so that its checksum over src/dst
// is `want` (!= 0xffff): lets a test hit the one's-complement corner cases (0x0000, the
// carry when a type or address changes).
void tune(L4& l4, size_t at, const Bytes& src, const Bytes& dst, uint16_t want) {
  l4.bytes[at] = l4.bytes[at + 1] = 0;
  const uint32_t have = uint16_t(~raw_csum(l4, src, dst));   // folded sum without the word
  uint32_t w = uint16_t(~want) + uint32_t(uint16_t(~have));  // (~want) - have, one's compl.
  w = (w & 0xffff) + (w >> 16);
  l4.bytes[at] = uint8_t(w >> 8);
  l4.bytes[at + 1] = uint8_t(w);
}

struct V4 {
  const char* src = "10.0.0.1";
  const char* dst = "10.0.0.2";
  uint8_t ttl = 64, tos = 0;
  uint16_t frag = 0x4000;  // DF
  Bytes options;           // padded to 4 bytes by the caller
  int ihl = -1;            // -1: from the options
  int tot_len = -1;        // -1: real length
};

Bytes ipv4(const V4& h, uint8_t proto, const Bytes& body) {
  Bytes b;
  const size_t hl = 20 + h.options.size();
  b.push_back(uint8_t(0x40 | (h.ihl >= 0 ? h.ihl : int(hl / 4))));
  b.push_back(h.tos);
  put16(b, uint16_t(h.tot_len >= 0 ? h.tot_len : int(hl + body.size())));
  put16(b, 0x1c46);
  put16(b, h.frag);
  b.push_back(h.ttl);
  b.push_back(proto);
  put16(b, 0);
  append(b, v4(h.src));
  append(b, v4(h.dst));
  append(b, h.options);
  const uint16_t c = csum(sum16(b.data(), b.size()));
  b[10] = uint8_t(c >> 8);
  b[11] = uint8_t(c);
  append(b, body);
  return b;
}

Bytes ipv4_l4(V4 h, L4 l4) {
  l4_csum(l4, v4(h.src), v4(h.dst));
  return ipv4(h, l4.proto, l4.bytes);
}

struct V6 {
  const char* src = "fd00::1";
  const char* dst = "fd00::2";
  uint8_t hlim = 64;
};

Bytes ipv6(const V6& h, uint8_t next, const Bytes& body) {
  Bytes b;
  put32(b, 0x60012345);  // version 6, traffic class 0, flow label 0x12345
  put16(b, uint16_t(body.size()));
  b.push_back(next);
  b.push_back(h.hlim);
  append(b, v6(h.src));
  append(b, v6(h.dst));
  append(b, body);
  return b;
}

Bytes ipv6_l4(V6 h, L4 l4) {
  l4_csum(l4, v6(h.src), v6(h.dst));
  return ipv6(h, l4.proto, l4.bytes);
}

// RFC 8200 4.3-4.6 extension headers before `l4` (the L4 checksum is over the L4 part).
Bytes ipv6_ext(V6 h, const std::vector<uint8_t>& chain, L4 l4, uint16_t frag_off = 0,
               bool more = false) {
  l4_csum(l4, v6(h.src), v6(h.dst));
  Bytes body;
  for (size_t i = 0; i < chain.size(); ++i) {
    const uint8_t next = i + 1 < chain.size() ? chain[i + 1] : l4.proto;
    if (chain[i] == 44) {  // Fragment: next, reserved, offset|M, identification
      body.push_back(next);
      body.push_back(0);
      put16(body, uint16_t(frag_off << 3 | (more ? 1 : 0)));
      put32(body, 0xabcd0001);
    } else if (chain[i] == 43) {  // Routing type 0 segments left 0, one address
      body.push_back(next);
      body.push_back(2);
      body.push_back(0);
      body.push_back(0);
      put32(body, 0);
      append(body, v6("fd00::2"));
    } else {  // Hop-by-hop / destination options: PadN to 8 bytes
      body.push_back(next);
      body.push_back(0);
      body.push_back(1);
      body.push_back(4);
      put32(body, 0);
    }
  }
  append(body, l4.bytes);
  return ipv6(h, chain.empty() ? l4.proto : chain[0], body);
}

Bytes frame(Bytes e, const Bytes& l3) {
  append(e, l3);
  return e;
}

Bytes cut(Bytes b, size_t n) {
  b.resize(n);
  return b;
}

Bytes arp_request() {
  Bytes b;
  append(b, std::array<uint8_t, 8>{0, 1, 8, 0, 6, 4, 0, 1});
  append(b, kClientMac);
  append(b, v4("10.0.0.1"));
  append(b, Bytes(6, 0));
  append(b, v4("10.0.0.2"));
  return b;
}

}  // namespace

std::vector<EdgePacket> edge_packets() {
  std::vector<EdgePacket> v;
  auto add = [&](std::string name, Bytes b) { v.push_back({std::move(name), std::move(b)}); };
  const Bytes syn80 = frame(eth(kIPv4), ipv4_l4({}, tcp(40000, 80, kSyn)));
  const Bytes dns = frame(eth(kIPv4), ipv4_l4({}, udp(40001, 53, 29)));

  // Sizes around test_run's limits (ETH_HLEN .. PAGE_SIZE - headroom - tailroom = 3520 B).
  // Longer frames are not here: test_run puts the bytes past 3520 into fragments
  // (multi-buffer XDP), which knod's one-frame batch slots do not model; knod run skips them.
  add("runt-1", Bytes(1, 0xff));
  add("runt-13", cut(syn80, 13));
  add("eth-only-14", cut(syn80, 14));
  add("eth-plus-1-15", cut(syn80, 15));
  add("jumbo-udp4-3520", frame(eth(kIPv4), ipv4_l4({}, udp(40002, 5201, 3520 - 14 - 20 - 8))));
  add("jumbo-udp6-3520", frame(eth(kIPv6), ipv6_l4({}, udp(40002, 5201, 3520 - 14 - 40 - 8))));
  add("jumbo-icmp4-3520", frame(eth(kIPv4), ipv4_l4({}, icmp_echo(false, 3520 - 14 - 20 - 8))));
  add("jumbo-icmp6-3519", frame(eth(kIPv6), ipv6_l4({}, icmp_echo(true, 3519 - 14 - 40 - 8))));

  // Cut headers.
  add("ipv4-cut-19", cut(syn80, 14 + 19));
  add("ipv4-tcp-cut-10", cut(syn80, 14 + 20 + 10));
  add("ipv4-tcp-cut-19", cut(syn80, 14 + 20 + 19));
  add("ipv4-udp-cut-7", cut(dns, 14 + 20 + 7));
  add("ipv4-udp-header-only", cut(dns, 14 + 20 + 8));
  const Bytes syn6 = frame(eth(kIPv6), ipv6_l4({}, tcp(40003, 80, kSyn)));
  add("ipv6-cut-39", cut(syn6, 14 + 39));
  add("ipv6-tcp-cut-12", cut(syn6, 14 + 40 + 12));
  add("ipv6-udp-cut-7", cut(frame(eth(kIPv6), ipv6_l4({}, udp(40004, 53, 20))), 14 + 40 + 7));
  add("icmp4-cut-4", cut(frame(eth(kIPv4), ipv4_l4({}, icmp_echo(false, 8))), 14 + 20 + 4));
  add("icmp6-cut-6", cut(frame(eth(kIPv6), ipv6_l4({}, icmp_echo(true, 8))), 14 + 40 + 6));
  {
    V4 h;
    h.tot_len = 1400;  // claims more than the frame holds
    add("ipv4-tot-len-too-big", frame(eth(kIPv4), ipv4_l4(h, udp(40005, 53, 10))));
  }

  // Bad IHL.
  for (int ihl : {0, 3, 4, 15}) {
    V4 h;
    h.ihl = ihl;
    add("ipv4-ihl-" + std::to_string(ihl), frame(eth(kIPv4), ipv4_l4(h, tcp(40006, 80, kSyn))));
  }
  {
    V4 h;
    h.options = Bytes(40, 1);  // ihl 15 with 40 bytes of NOPs
    add("ipv4-ihl-15-nops", frame(eth(kIPv4), ipv4_l4(h, tcp(40007, 80, kSyn))));
  }
  {
    V4 h;
    h.options = {1, 1, 1, 0};  // NOP NOP NOP EOL
    add("ipv4-opt-nop-tcp80", frame(eth(kIPv4), ipv4_l4(h, tcp(40008, 80, kSyn))));
    h.options = {7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // record route, 2 slots
    add("ipv4-opt-rr-udp53", frame(eth(kIPv4), ipv4_l4(h, udp(40009, 53, 17))));
    add("ipv4-opt-rr-icmp-echo", frame(eth(kIPv4), ipv4_l4(h, icmp_echo(false, 9))));
  }
  {
    V4 h;
    h.frag = 0x0000;
    h.ttl = 1;
    add("ipv4-wrong-version", [&] {
      Bytes b = frame(eth(kIPv4), ipv4_l4(h, udp(40010, 53, 4)));
      b[14] = 0x65;
      return b;
    }());
  }

  // VLAN and QinQ.
  add("vlan100-tcp80",
      frame(eth(kIPv4, {{kVlan, 100}}),
            ipv4_l4({.src = "10.0.100.1", .dst = "10.0.100.2"}, tcp(40011, 80, kSyn))));
  add("vlan100-arp", frame(eth(kArp, {{kVlan, 100}}), arp_request()));
  add("vlan200-udp", frame(eth(kIPv4, {{kVlan, 200}}), ipv4_l4({}, udp(40012, 53, 12))));
  add("vlan100-ipv6-udp", frame(eth(kIPv6, {{kVlan, 100}}), ipv6_l4({}, udp(40013, 53, 12))));
  add("vlan0-prio-icmp", frame(eth(kIPv4, {{kVlan, 0x6000}}), ipv4_l4({}, icmp_echo(false, 5))));
  add("qinq-300-100-udp",
      frame(eth(kIPv4, {{kQinQ, 300}, {kVlan, 100}}), ipv4_l4({}, udp(40014, 53, 16))));
  add("qinq-100-tcp80", frame(eth(kIPv4, {{kQinQ, 100}}), ipv4_l4({}, tcp(40015, 80, kSyn))));
  add("vlan-tag-cut", cut(frame(eth(kIPv4, {{kVlan, 100}}), ipv4_l4({}, udp(1, 2))), 16));
  add("vlan-ipv4-cut", cut(frame(eth(kIPv4, {{kVlan, 100}}), ipv4_l4({}, udp(1, 2))), 18 + 12));
  add("vlan-blocklisted-src",
      frame(eth(kIPv4, {{kVlan, 100}}), ipv4_l4({.src = "10.0.100.9"}, udp(40016, 53, 8))));

  // IPv6 extension header chains (RFC 8200 4.1 order) and fragments.
  add("ipv6-ext-hbh-rt-frag-dst-udp",
      frame(eth(kIPv6), ipv6_ext({}, {0, 43, 44, 60}, udp(40017, 53, 21))));
  add("ipv6-ext-hbh-rt-frag-dst-icmp6",
      frame(eth(kIPv6), ipv6_ext({}, {0, 43, 44, 60}, icmp_echo(true, 13))));
  add("ipv6-ext-dst-tcp80", frame(eth(kIPv6), ipv6_ext({}, {60}, tcp(40018, 80, kSyn))));
  add("ipv6-ext-long-chain",
      frame(eth(kIPv6), ipv6_ext({}, {0, 60, 60, 60, 60, 60, 60, 60, 43}, udp(40019, 53, 3))));
  add("ipv6-frag-first", frame(eth(kIPv6), ipv6_ext({}, {44}, udp(40020, 53, 40), 0, true)));
  add("ipv6-frag-later", frame(eth(kIPv6), ipv6_ext({}, {44}, udp(40020, 53, 40), 185, false)));
  add("ipv6-ext-cut", cut(frame(eth(kIPv6), ipv6_ext({}, {0, 60}, udp(1, 2))), 14 + 40 + 4));
  add("ipv6-no-next", frame(eth(kIPv6), ipv6({}, 59, {})));

  // IPv4 fragments (first with MF, a middle one, the last; to the VIP and from the client).
  {
    V4 h;
    h.frag = 0x2000;
    add("ipv4-frag-first-udp53", frame(eth(kIPv4), ipv4_l4(h, udp(40021, 53, 64))));
    h.frag = 0x2000 | 185;
    add("ipv4-frag-middle", frame(eth(kIPv4), ipv4(h, kUdp, payload(64))));
    h.frag = 185 * 2;
    add("ipv4-frag-last", frame(eth(kIPv4), ipv4(h, kTcp, payload(30))));
    h.frag = 0x2000;
    add("ipv4-frag-first-tcp80", frame(eth(kIPv4), ipv4_l4(h, tcp(40022, 80, kSyn, 24))));
  }

  // ICMP / ICMPv6 echo requests of odd lengths to our addresses, and to a stranger.
  for (size_t n : {0, 1, 3, 7, 57, 1473})
    add("icmp4-echo-" + std::to_string(n), frame(eth(kIPv4), ipv4_l4({}, icmp_echo(false, n))));
  for (size_t n : {1, 3, 57, 1453})
    add("icmp6-echo-" + std::to_string(n), frame(eth(kIPv6), ipv6_l4({}, icmp_echo(true, n))));
  add("icmp4-echo-stranger", frame(eth(kIPv4), ipv4_l4({.dst = "10.0.0.9"}, icmp_echo(false, 11))));
  add("icmp6-echo-stranger", frame(eth(kIPv6), ipv6_l4({.dst = "fd00::9"}, icmp_echo(true, 11))));
  {
    L4 reply = icmp_echo(false, 5);
    reply.bytes[0] = 0;  // an echo reply is not answered
    add("icmp4-echo-reply", frame(eth(kIPv4), ipv4_l4({}, reply)));
  }
  add("icmp4-big-1600", frame(eth(kIPv4), ipv4_l4({}, icmp_echo(false, 1600 - 42))));

  // Policies: telnet / chargen (tailcall), SYN flood and rate limit (ddos), blocklist.
  add("tcp-telnet", frame(eth(kIPv4), ipv4_l4({}, tcp(40023, 23, kSyn))));
  add("udp-chargen", frame(eth(kIPv4), ipv4_l4({}, udp(40024, 19, 1))));
  add("tcp6-telnet", frame(eth(kIPv6), ipv6_l4({}, tcp(40025, 23, kSyn))));
  add("udp6-chargen", frame(eth(kIPv6), ipv6_l4({}, udp(40026, 19, 1))));
  for (int i = 0; i < 12; ++i)
    add("syn-flood-" + std::to_string(i),
        frame(eth(kIPv4), ipv4_l4({.src = "10.9.9.9"}, tcp(uint16_t(41000 + i), 80, kSyn))));
  add("synack-from-flooder",
      frame(eth(kIPv4), ipv4_l4({.src = "10.9.9.9"}, tcp(41000, 80, kSyn | kAck))));
  for (int i = 0; i < 24; ++i)
    add("udp-burst-" + std::to_string(i),
        frame(eth(kIPv4), ipv4_l4({.src = "10.7.7.7"}, udp(42000, 5201, size_t(i)))));
  add("blocklist-192/8", frame(eth(kIPv4), ipv4_l4({.src = "192.0.2.1"}, udp(1, 53, 3))));

  // Routes of the test namespace (diff_test.cpp kRoutes): gateway, blackhole, unreachable,
  // prohibit, no route, no neighbour, TTL/hop limit expiring, MTU exceeded.
  for (const char* dst : {"172.16.1.1", "192.0.2.7", "198.51.100.1", "203.0.113.1", "8.8.8.8",
                          "10.0.0.77", "10.0.0.1"})
    add(std::string("route4-") + dst,
        frame(eth(kIPv4), ipv4_l4({.src = "10.0.0.1", .dst = dst}, udp(43000, 53, 33))));
  for (uint8_t ttl : {0, 1, 2})
    add("ttl-" + std::to_string(ttl), frame(eth(kIPv4), ipv4_l4({.ttl = ttl}, udp(43001, 53, 5))));
  for (const char* dst : {"fd00::2", "fd00::77", "fd00:dead::1", "2001:db8::1", "fd01::5"})
    add(std::string("route6-") + dst, frame(eth(kIPv6), ipv6_l4({.dst = dst}, udp(43002, 53, 27))));
  for (uint8_t hl : {0, 1, 2})
    add("hlim-" + std::to_string(hl), frame(eth(kIPv6), ipv6_l4({.hlim = hl}, udp(43003, 53, 5))));
  // bpf_fib_lookup compares tot_len (IPv4 total length, IPv6 payload length) with the MTU.
  add("route4-tot-len-1500", frame(eth(kIPv4), ipv4_l4({}, udp(43004, 53, 1500 - 28))));
  add("route4-tot-len-1501", frame(eth(kIPv4), ipv4_l4({}, udp(43004, 53, 1501 - 28))));
  add("route6-payload-1500", frame(eth(kIPv6), ipv6_l4({}, udp(43004, 53, 1500 - 8))));
  add("route6-payload-1501", frame(eth(kIPv6), ipv6_l4({}, udp(43004, 53, 1501 - 8))));
  add("route4-tos", frame(eth(kIPv4), ipv4_l4({.tos = 0xb8}, tcp(43005, 443, kAck | kPsh, 9))));

  // NAT: a zero UDP checksum stays zero; a new TCP flow; a reply to the outside address.
  {
    Bytes b = frame(eth(kIPv4), ipv4_l4({}, udp(44000, 53, 9)));
    b[14 + 20 + 6] = b[14 + 20 + 7] = 0;
    add("udp-csum-zero", b);
  }
  add("nat-new-flow", frame(eth(kIPv4), ipv4_l4({}, tcp(44001, 8080, kSyn))));
  add("nat-reply",
      frame(eth(kIPv4, {}, kClientMac, kServerMac),
            ipv4_l4({.src = "10.0.0.2", .dst = "10.0.1.1"}, tcp(8080, 44001, kSyn | kAck))));
  add("nat-flow-again", frame(eth(kIPv4), ipv4_l4({}, tcp(44001, 8080, kAck, 5))));

  // One's-complement corners: an echo request whose checksum is 0x0000, or whose reply's
  // incremental update (type 8 -> 0) carries; SNAT making a UDP checksum compute to zero.
  for (uint16_t want : {0x0000, 0x07ff, 0xf7ff, 0xf800, 0xfffe}) {
    L4 e = icmp_echo(false, 6);
    tune(e, 8, v4("10.0.0.1"), v4("10.0.0.2"), want);
    add("icmp4-echo-csum-" + std::to_string(want), frame(eth(kIPv4), ipv4_l4({}, e)));
    L4 e6 = icmp_echo(true, 7);
    tune(e6, 8, v6("fd00::1"), v6("fd00::2"), want);
    add("icmp6-echo-csum-" + std::to_string(want), frame(eth(kIPv6), ipv6_l4({}, e6)));
  }
  for (uint16_t want : {0x0000, 0x0001, 0xfffe}) {
    L4 u = udp(uint16_t(44100 + want % 7), 53, 4);
    tune(u, 8, v4("10.0.1.1"), v4("10.0.0.2"), want);  // the checksum after SNAT
    add("nat-udp-csum-after-" + std::to_string(want), frame(eth(kIPv4), ipv4_l4({}, u)));
    L4 t = tcp(uint16_t(44200 + want % 7), 80, kAck, 4);
    tune(t, 20, v4("10.0.1.1"), v4("10.0.0.2"), want);
    add("nat-tcp-csum-after-" + std::to_string(want), frame(eth(kIPv4), ipv4_l4({}, t)));
  }

  // Other ethertypes.
  add("arp", frame(eth(kArp), arp_request()));
  add("lldp", frame(eth(0x88cc), payload(46)));
  add("ieee802.3-len", frame(eth(0x002e), payload(46)));
  add("ipv6-in-0800", frame(eth(kIPv4), ipv6_l4({}, udp(1, 53, 3))));
  add("ipv4-in-86dd", frame(eth(kIPv6), ipv4_l4({}, udp(1, 53, 3))));
  return v;
}

}  // namespace knod::diff
