// IPv6 transport-mode ESP with extension headers: ESP where the kernel puts it
// (ip6_find_1stfragopt: after hop-by-hop and routing headers, and after destination options
// before a routing header; RFC 4303 §3.1.1, RFC 8200 §4.1), the chain's Next Header restored
// on input, and malformed chains as counted drops. cipher_null keeps the layout readable.
#include <gtest/gtest.h>

#include "util.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/ip6_ext.h"

namespace knod::xfrm {
namespace {
using namespace test;

const std::string kNull =
    "ip xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi 0x600 mode transport "
    "replay-window 64 enc 'cipher_null' \"\" auth-trunc 'hmac(sha256)' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 128";
constexpr uint32_t kIcv = 16;

/// Hop-by-hop or destination options: 8 bytes, one PadN option (RFC 8200 §4.2).
Bytes opts(uint8_t nh) {
  return {nh, 0, 1, 4, 0, 0, 0, 0};
}
/// Routing header, type 0 layout with one address, segments left 0 (RFC 8200 §4.4).
Bytes routing(uint8_t nh) {
  Bytes r = {nh, 2, 0, 0, 0, 0, 0, 0};
  Bytes a = hex("20010db8000000000000000000000009");
  r.insert(r.end(), a.begin(), a.end());
  return r;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes o;
  for (const auto& p : parts) o.insert(o.end(), p.begin(), p.end());
  return o;
}

struct Fixture {
  Sad out, in;
  OpensslEngine eo, ei;
  Counters cout, cin;
  explicit Fixture(const std::string& line) {
    out.add(state(line));
    in.add(state(line));
    engine_load(eo, out);
    engine_load(ei, in);
  }
  Drop enc(const Bytes& p, Bytes* res) {
    TestBatch b({p});
    b.sa[0] = 0;
    esp_encrypt_batch(out, eo, b.b, cout);
    *res = b.packet(0);
    return b.result(0);
  }
  Drop dec(const Bytes& p, Bytes* res = nullptr) {
    TestBatch b({p});
    esp_decrypt_batch(in, ei, b.b, cin);
    if (res) *res = b.packet(0);
    return b.result(0);
  }
};

struct Layout {
  const char* name;
  Bytes exts;        // extension headers after the fixed header (chain ends in UDP, 17)
  uint8_t first_nh;  // fixed header's Next Header
  uint32_t esp_at;   // where the kernel puts ESP (bytes from the IPv6 header)
  uint32_t nh_off;   // Next Header byte that becomes 50
  uint8_t trailer;   // ESP trailer's Next Header
};

std::vector<Layout> layouts() {
  return {
      {"hop-by-hop", opts(17), 0, 48, 40, 17},
      // Destination options with no routing header: kept in front (ip6_find_1stfragopt).
      {"hop+dstopts", cat({opts(60), opts(17)}), 0, 56, 48, 17},
      // Destination options after a routing header are for the final destination: encrypted.
      {"hop+routing+dstopts", cat({opts(43), routing(60), opts(17)}), 0, 72, 48, 60},
      // Destination options before a routing header stay in front.
      {"dstopts+routing", cat({opts(43), routing(17)}), 60, 72, 48, 17},
      // A fragment header ends the walk (ip6_find_1stfragopt's default case): ESP before it.
      {"fragment", Bytes{17, 0, 0, 0, 0, 0, 0, 7}, 44, 40, 6, 44},
      {"none", {}, 17, 40, 6, 17},
  };
}

TEST(XfrmIp6Ext, EspAtTheKernelsPositionAndRoundTrip) {
  for (const Layout& l : layouts()) {
    SCOPED_TRACE(l.name);
    Fixture f(kNull);
    Bytes body = udp(1000, 2000, counting(37));
    Bytes orig = ipv6("2001:db8::1", "2001:db8::2", l.first_nh, cat({l.exts, body}));
    Bytes e;
    ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
    // Headers in front unchanged except the one Next Header byte.
    for (uint32_t i = 0; i < l.esp_at; ++i) {
      if (i == l.nh_off || i == 4 || i == 5) continue;
      EXPECT_EQ(e[i], orig[i]) << "byte " << i;
    }
    EXPECT_EQ(e[l.nh_off], kProtoEsp);
    EXPECT_EQ(ld16(&e[4]), e.size() - kIpv6Hdr);
    EXPECT_EQ(ld32(&e[l.esp_at]), 0x600u);  // SPI
    EXPECT_EQ(ld32(&e[l.esp_at + 4]), 1u);  // seq
    // cipher_null: the encrypted part is the rest of the original packet, then the trailer.
    uint32_t rest = uint32_t(orig.size()) - l.esp_at;
    EXPECT_TRUE(std::equal(orig.begin() + l.esp_at, orig.end(), e.begin() + l.esp_at + 8));
    uint32_t padded = uint32_t(e.size()) - l.esp_at - 8 - kIcv;
    EXPECT_EQ(padded % 4, 0u);
    EXPECT_EQ(e[e.size() - kIcv - 2], padded - rest - 2);  // pad length
    EXPECT_EQ(e[e.size() - kIcv - 1], l.trailer);          // next header
    Bytes d;
    ASSERT_EQ(f.dec(e, &d), Drop::kOk);
    EXPECT_EQ(d, orig);
    EXPECT_EQ(f.cin.packets, 1u);
  }
}

TEST(XfrmIp6Ext, AeadRoundTripWithExtensionHeaders) {
  Fixture f(
      "ip xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi 0x601 mode transport "
      "replay-window 64 aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128");
  Bytes orig = ipv6("2001:db8::1", "2001:db8::2", 0,
                    cat({opts(43), routing(60), opts(17), udp(1, 2, counting(100))}));
  Bytes e, d;
  ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
  EXPECT_EQ(e[48], kProtoEsp);
  EXPECT_EQ(e.size(), 72u + 8 + 8 + (8 + 8 + 100 + 2 + 2) + 16);  // ESP, IV, padded, ICV
  ASSERT_EQ(f.dec(e, &d), Drop::kOk);
  EXPECT_EQ(d, orig);
}

// A routing header with Segments Left != 0 in front of ESP: the packet is routed on, not
// delivered to ESP here (RFC 8200 §4.4, ipv6_rthdr_rcv): passed through, not decrypted.
TEST(XfrmIp6Ext, RoutingHeaderWithSegmentsLeftIsNotForUs) {
  Fixture f(
      "ip xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi 0x601 mode transport "
      "replay-window 64 aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128");
  Bytes orig = ipv6("2001:db8::1", "2001:db8::2", 0,
                    cat({opts(43), routing(60), opts(17), udp(1, 2, counting(100))}));
  Bytes e, d;
  ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
  ASSERT_EQ(e[48], kProtoEsp);  // the routing header (at 48) names ESP
  Bytes routed = e;
  routed[51] = 1;  // Segments Left
  EXPECT_EQ(f.dec(routed, &d), Drop::kNotEsp);
  EXPECT_EQ(d, routed);  // unchanged
  EXPECT_EQ(f.cin.packets, 0u);
  ASSERT_EQ(f.dec(e, &d), Drop::kOk);  // segments left 0: delivered, decrypted
  EXPECT_EQ(d, orig);
}

// ESP-in-UDP over IPv6 transport: the UDP header goes where ESP would, and its checksum
// (RFC 8200 §8.1) is set over the UDP header where it is.
TEST(XfrmIp6Ext, EspInUdpAfterHopByHop) {
  Fixture f(kNull + " encap espinudp 4500 4500 0.0.0.0");
  Bytes orig = ipv6("2001:db8::1", "2001:db8::2", 0, cat({opts(17), udp(7, 8, counting(20))}));
  Bytes e, d;
  ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
  EXPECT_EQ(e[40], kProtoUdp);
  EXPECT_EQ(ld16(&e[48]), 4500);
  EXPECT_EQ(ld16(&e[52]), e.size() - 48);
  uint32_t s = csum_add(0, &e[8], 32) + uint32_t(e.size() - 48) + kProtoUdp;
  EXPECT_EQ(csum_fold(csum_add(s, &e[48], uint32_t(e.size() - 48))), 0);  // checksum verifies
  EXPECT_EQ(ld32(&e[56]), 0x600u);
  ASSERT_EQ(f.dec(e, &d), Drop::kOk);
  EXPECT_EQ(d, orig);
}

/// `e` (ESP after one hop-by-hop header) with `n` destination-options headers inserted
/// between the hop-by-hop header and ESP.
Bytes with_dstopts(const Bytes& e, uint32_t n) {
  Bytes o(e.begin(), e.begin() + 48);
  o[40] = n ? kNhDestOpts : kProtoEsp;
  for (uint32_t i = 0; i < n; ++i) {
    Bytes h = opts(i + 1 < n ? kNhDestOpts : kProtoEsp);
    o.insert(o.end(), h.begin(), h.end());
  }
  o.insert(o.end(), e.begin() + 48, e.end());
  st16(&o[4], uint16_t(o.size() - kIpv6Hdr));
  return o;
}

TEST(XfrmIp6Ext, MalformedChainsAreCountedDrops) {
  Fixture f(kNull);
  Bytes orig = ipv6("2001:db8::1", "2001:db8::2", 0, cat({opts(17), udp(1, 2, counting(30))}));
  Bytes e;
  ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
  ASSERT_EQ(e[40], kProtoEsp);
  uint64_t drops = 0;
  // Truncated: the hop-by-hop header claims 8 * (1 + 200) bytes, past the payload length.
  Bytes x = e;
  x[41] = 200;
  EXPECT_EQ(f.dec(x), Drop::kMalformed);
  ++drops;
  // Truncated: the payload length ends inside the hop-by-hop header.
  x = Bytes(e.begin(), e.begin() + 45);
  st16(&x[4], 5);
  EXPECT_EQ(f.dec(x), Drop::kMalformed);
  ++drops;
  // Payload length ends right after the fixed header while it names hop-by-hop.
  x = Bytes(e.begin(), e.begin() + 40);
  st16(&x[4], 0);
  EXPECT_EQ(f.dec(x), Drop::kMalformed);
  ++drops;
  // Hop-by-hop not first (RFC 8200 §4.3): destination options, then hop-by-hop, then ESP.
  x = with_dstopts(e, 1);
  x[6] = kNhDestOpts, x[40] = kNhHopByHop, x[48] = kProtoEsp;
  EXPECT_EQ(f.dec(x), Drop::kMalformed);
  ++drops;
  // Too many: 1 + 8 headers in front of ESP (1 + 7 is accepted, below).
  EXPECT_EQ(f.dec(with_dstopts(e, kIp6MaxExtHdrs)), Drop::kMalformed);
  ++drops;
  EXPECT_EQ(f.cin[Drop::kMalformed], drops);
  EXPECT_EQ(f.cin.packets, 0u);
  Bytes d;
  ASSERT_EQ(f.dec(with_dstopts(e, kIp6MaxExtHdrs - 1), &d), Drop::kOk);
  // The original with the same destination options, the last one naming UDP.
  Bytes want = with_dstopts(orig, kIp6MaxExtHdrs - 1);
  want[48 + 8 * (kIp6MaxExtHdrs - 2)] = kProtoUdp;
  EXPECT_EQ(d, want);
  // Output: a truncated chain is not encrypted.
  x = ipv6("2001:db8::1", "2001:db8::2", 0, cat({opts(17), udp(1, 2, counting(8))}));
  x[41] = 9;
  Bytes o;
  EXPECT_EQ(f.enc(x, &o), Drop::kMalformed);
  EXPECT_EQ(f.cout[Drop::kMalformed], 1u);
}

// Every truncation and byte flip of a packet with a hop-by-hop, routing, destination-options
// chain in front of ESP is a counted drop, never a crash (bounds: KNOD_SANITIZE builds).
TEST(XfrmIp6Ext, TruncationsAndFlipsOfTheChain) {
  Fixture f(kNull);
  Bytes orig = ipv6("2001:db8::1", "2001:db8::2", 0,
                    cat({opts(60), opts(43), routing(60), opts(17), udp(1, 2, counting(9))}));
  Bytes e;
  ASSERT_EQ(f.enc(orig, &e), Drop::kOk);
  ASSERT_EQ(e[56], kProtoEsp);  // hop-by-hop, dstopts, routing (at 56) in front
  std::vector<Bytes> bad;
  for (size_t n = 0; n < e.size(); ++n) {
    Bytes t(e.begin(), e.begin() + long(n));
    if (t.size() >= 6) st16(&t[4], uint16_t(t.size() - std::min<size_t>(t.size(), 40)));
    bad.push_back(t);
  }
  for (size_t i = 80; i < e.size(); ++i) {  // ESP header onwards
    Bytes x = e;
    x[i] ^= 0x40;
    bad.push_back(x);
  }
  TestBatch b(bad);
  Counters c;
  esp_decrypt_batch(f.in, f.ei, b.b, c);
  uint64_t drops = 0;
  for (auto v : c.drops) drops += v;
  EXPECT_EQ(drops, b.b.count);
  EXPECT_EQ(c.packets, 0u);
  for (uint32_t i = 0; i < b.b.count; ++i) EXPECT_NE(b.result(i), Drop::kOk) << i;
  Bytes d;
  ASSERT_EQ(f.dec(e, &d), Drop::kOk);
  EXPECT_EQ(d, orig);
  // Flips inside the chain (not covered by ESP's ICV): a changed Next Header (40, 48, 56)
  // is not ESP, nor is a routing header with Segments Left set (59: routed on); a changed
  // Hdr Ext Len (41, 49, 57) runs past the packet; the other 33 still parse and reach the
  // replay window, which `e` already moved.
  std::vector<Bytes> chain;
  for (size_t i = 40; i < 80; ++i) {
    Bytes x = e;
    x[i] ^= 0x40;
    chain.push_back(x);
  }
  TestBatch b2(chain);
  Counters c2;
  esp_decrypt_batch(f.in, f.ei, b2.b, c2);
  drops = 0;
  for (auto v : c2.drops) drops += v;
  EXPECT_EQ(drops, b2.b.count);
  EXPECT_EQ(c2[Drop::kNotEsp], 4u);
  EXPECT_EQ(c2[Drop::kMalformed], 3u);
  EXPECT_EQ(c2[Drop::kReplay], 33u);
}

TEST(XfrmIp6Ext, FlowKeyLooksPastTheChain) {
  Bytes p = ipv6("2001:db8::1", "2001:db8::2", 0,
                 cat({opts(43), routing(60), opts(17), udp(1234, 5678, counting(4))}));
  FlowKey k;
  ASSERT_TRUE(flow_key(p.data(), uint32_t(p.size()), k));
  EXPECT_EQ(k.proto, kProtoUdp);
  EXPECT_EQ(k.sport, 1234);
  EXPECT_EQ(k.dport, 5678);
}

}  // namespace
}  // namespace knod::xfrm
