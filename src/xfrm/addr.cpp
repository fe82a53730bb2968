#include "xfrm/addr.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <cstring>

#include "base/error.h"

namespace knod::xfrm {

bool Prefix::contains(const Addr& a) const {
  if (addr.family == 0) return true;
  if (a.family != addr.family) return false;
  uint32_t bits = plen;
  for (uint32_t i = 0; bits > 0; ++i, bits = bits >= 8 ? bits - 8 : 0) {
    uint8_t mask = bits >= 8 ? 0xff : uint8_t(0xff << (8 - bits));
    if ((a.bytes[i] & mask) != (addr.bytes[i] & mask)) return false;
  }
  return true;
}

Addr parse_addr(std::string_view s) {
  std::string str(s);
  Addr a;
  if (inet_pton(AF_INET, str.c_str(), a.bytes) == 1) {
    a.family = 4;
  } else if (inet_pton(AF_INET6, str.c_str(), a.bytes) == 1) {
    a.family = 6;
  } else {
    throw Error(fmt::format("xfrm: bad address '{}'", s));
  }
  return a;
}

Prefix parse_prefix(std::string_view s) {
  Prefix p;
  auto slash = s.find('/');
  p.addr = parse_addr(s.substr(0, slash));
  uint32_t max = p.addr.family == 6 ? 128 : 32;
  p.plen = uint8_t(max);
  if (slash != std::string_view::npos) {
    std::string n(s.substr(slash + 1));
    char* end = nullptr;
    unsigned long v = std::strtoul(n.c_str(), &end, 10);
    if (n.empty() || *end || v > max) throw Error(fmt::format("xfrm: bad prefix '{}'", s));
    p.plen = uint8_t(v);
  }
  return p;
}

std::string to_string(const Addr& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.family) inet_ntop(a.family == 6 ? AF_INET6 : AF_INET, a.bytes, buf, sizeof buf);
  return buf;
}

std::string to_string(const Prefix& p) {
  return p.addr.family ? fmt::format("{}/{}", to_string(p.addr), p.plen) : "any";
}

}  // namespace knod::xfrm
