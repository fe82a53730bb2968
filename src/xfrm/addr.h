// IP addresses and prefixes as ip-xfrm writes them (IPv4 or IPv6), in network byte order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace knod::xfrm {

/// An IPv4 (family 4, bytes[0..3]) or IPv6 (family 6, bytes[0..15]) address. family 0: unset.
struct Addr {
  uint8_t family = 0;
  uint8_t bytes[16] = {};
  bool operator==(const Addr&) const = default;
  uint32_t len() const { return family == 6 ? 16 : 4; }
};

/// An address with prefix length in bits (0 = any), as in `src 10.0.0.0/8`.
struct Prefix {
  Addr addr;
  uint8_t plen = 0;
  /// True when `a` (same family) lies in the prefix; an unset prefix matches anything.
  bool contains(const Addr& a) const;
};

/// Parses "10.0.0.1" or "fd00::1". Throws knod::Error naming the text.
Addr parse_addr(std::string_view s);
/// Parses "10.0.0.0/8", "fd00::/64" or a bare address (full length).
Prefix parse_prefix(std::string_view s);
std::string to_string(const Addr& a);
std::string to_string(const Prefix& p);

}  // namespace knod::xfrm
