// Range-checked number parsing for the assembly syntax (see number.h).
#include "isa/number.h"

namespace knod::isa {
namespace {

struct Parsed {
  bool neg = false;
  bool hex = false;
  uint64_t mag = 0;
};

std::optional<Parsed> parse(std::string_view s) {
  Parsed p;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    p.neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    p.hex = true;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  const unsigned base = p.hex ? 16 : 10;
  for (char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (p.hex && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (p.hex && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    if (p.mag > (UINT64_MAX - d) / base) return std::nullopt;
    p.mag = p.mag * base + d;
  }
  return p;
}

/// Two's complement value of `bits` width, or nullopt when it does not fit.
std::optional<uint64_t> fit(std::string_view s, int bits) {
  auto p = parse(s);
  if (!p) return std::nullopt;
  const uint64_t umax = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  const uint64_t neg_max = uint64_t{1} << (bits - 1);  // |min|
  if (p->neg) {
    if (p->mag > neg_max) return std::nullopt;
    return (0 - p->mag) & umax;
  }
  // Hex gives the raw bits of the field; decimal must be a (signed) value of the field,
  // except for 64 bits, where unsigned decimal is accepted too.
  const uint64_t pos_max = (p->hex || bits == 64) ? umax : neg_max - 1;
  if (p->mag > pos_max) return std::nullopt;
  return p->mag;
}

}  // namespace

std::optional<int32_t> parse_imm32(std::string_view s) {
  auto v = fit(s, 32);
  if (!v) return std::nullopt;
  return static_cast<int32_t>(static_cast<uint32_t>(*v));
}

std::optional<int16_t> parse_off16(std::string_view s) {
  auto v = fit(s, 16);
  if (!v) return std::nullopt;
  return static_cast<int16_t>(static_cast<uint16_t>(*v));
}

std::optional<uint64_t> parse_imm64(std::string_view s) {
  return fit(s, 64);
}

}  // namespace knod::isa
