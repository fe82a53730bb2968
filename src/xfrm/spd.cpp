#include "xfrm/spd.h"

#include <cstring>

#include "base/error.h"
#include "xfrm/ip.h"
#include "xfrm/ip6_ext.h"

namespace knod::xfrm {

bool selector_match(const Selector& s, const FlowKey& k) {
  if (!s.src.contains(k.src) || !s.dst.contains(k.dst)) return false;
  if (s.proto && s.proto != k.proto) return false;
  if (s.sport && s.sport != k.sport) return false;
  if (s.dport && s.dport != k.dport) return false;
  return true;
}

bool flow_key(const uint8_t* p, uint32_t len, FlowKey& k) {
  uint32_t h = 0;
  if (len >= kIpv4Hdr && (p[0] >> 4) == 4) {
    k.src.family = k.dst.family = 4;
    std::memcpy(k.src.bytes, p + 12, 4);
    std::memcpy(k.dst.bytes, p + 16, 4);
    k.proto = p[9];
    h = (p[0] & 15) * 4u;
  } else if (len >= kIpv6Hdr && (p[0] >> 4) == 6) {
    k.src.family = k.dst.family = 6;
    std::memcpy(k.src.bytes, p + 8, 16);
    std::memcpy(k.dst.bytes, p + 24, 16);
    // The upper-layer protocol after the extension headers (as the kernel's
    // _decode_session6); a chain that does not parse gives the protocol reached, no ports.
    uint32_t tot = kIpv6Hdr + ld16(p + 4), nh_off;
    bool ok = ip6_skip_ext(p, tot < len ? tot : len, h, nh_off);
    k.proto = p[nh_off];
    if (!ok) return true;
  } else {
    return false;
  }
  if ((k.proto == 6 || k.proto == 17) && len >= h + 4)
    k.sport = ld16(p + h), k.dport = ld16(p + h + 2);
  return true;
}

bool tmpl_match(const Tmpl& t, const SaConfig& sa) {
  if (t.proto != sa.proto || t.mode != sa.mode) return false;
  if ((t.spi && t.spi != sa.spi) || (t.reqid && t.reqid != sa.reqid)) return false;
  return sa.mode != Mode::kTunnel || !t.src.family || t.src == sa.src;
}

namespace {
bool same_selector(const Selector& a, const Selector& b) {
  return a.src.addr == b.src.addr && a.src.plen == b.src.plen && a.dst.addr == b.dst.addr &&
         a.dst.plen == b.dst.plen && a.proto == b.proto && a.sport == b.sport && a.dport == b.dport;
}
}  // namespace

void Spd::add(const Policy& p) {
  for (const Policy& q : pols_)
    if (q.dir == p.dir && same_selector(q.sel, p.sel))
      throw Error(
          "xfrm: policy add: File exists (a policy with this selector and dir is "
          "installed; `policy update` replaces it)");
  pols_.push_back(p);
  ++count_[uint8_t(p.dir)];
}

void Spd::update(const Policy& p) {
  for (Policy& q : pols_)
    if (q.dir == p.dir && same_selector(q.sel, p.sel)) {
      q = p;
      return;
    }
  add(p);
}

const Policy* Spd::lookup(Dir dir, const FlowKey& k) const {
  const Policy* best = nullptr;
  for (const auto& p : pols_)
    if (p.dir == dir && selector_match(p.sel, k) && (!best || p.priority < best->priority))
      best = &p;
  return best;
}

}  // namespace knod::xfrm
