#include "xfrm/spd.h"

namespace knod::xfrm {

bool selector_match(const Selector& s, const FlowKey& k) {
  if (!s.src.contains(k.src) || !s.dst.contains(k.dst)) return false;
  if (s.proto && s.proto != k.proto) return false;
  if (s.sport && s.sport != k.sport) return false;
  if (s.dport && s.dport != k.dport) return false;
  return true;
}

void Spd::add(const Policy& p) {
  pols_.push_back(p);
}

const Policy* Spd::lookup(Dir dir, const FlowKey& k) const {
  const Policy* best = nullptr;
  for (const auto& p : pols_)
    if (p.dir == dir && selector_match(p.sel, k) && (!best || p.priority < best->priority))
      best = &p;
  return best;
}

}  // namespace knod::xfrm
