#include "xfrm/sad.h"

#include <fmt/core.h>

#include "base/error.h"
#include "xfrm/spd.h"

namespace knod::xfrm {
namespace {
std::string id_of(const SaConfig& c) {
  return fmt::format("src {} dst {} proto esp spi 0x{:08x}", to_string(c.src), to_string(c.dst),
                     c.spi);
}
}  // namespace

Sa& Sad::add(const SaConfig& cfg) {
  if (cfg.esn() && cfg.replay_window == 0) throw Error(kEsnNeedsWindow);
  Key key(cfg.spi, cfg.proto, cfg.dst);
  if (by_id_.count(key))
    throw Error(
        fmt::format("xfrm: state add {}: File exists (an SA with this dst, spi and proto "
                    "is installed; use `state update`)",
                    id_of(cfg)));
  auto sa = std::make_unique<Sa>();
  sa->cfg = cfg;
  sa->index = uint32_t(sas_.size());
  replay_init(sa->replay, cfg.replay_window, cfg.seq);
  sa->oseq = cfg.oseq;
  by_id_.emplace(key, sa->index);
  note_encap(cfg);
  sas_.push_back(std::move(sa));
  return *sas_.back();
}

Sa& Sad::update(const SaConfig& cfg) {
  Sa* sa = find(cfg.spi, cfg.dst, cfg.proto);
  if (!sa)
    throw Error(fmt::format("xfrm: state update {}: No such process (no such SA)", id_of(cfg)));
  if (sa->cfg.encap != cfg.encap)
    throw Error(
        fmt::format("xfrm: state update {}: Invalid argument (cannot add or remove encap espinudp)",
                    id_of(cfg)));
  sa->cfg.limits = cfg.limits;
  sa->cfg.encap_sport = cfg.encap_sport, sa->cfg.encap_dport = cfg.encap_dport;
  sa->cfg.encap_oa = cfg.encap_oa;
  note_encap(cfg);
  sa->dying = false;  // the kernel clears km.dying: a new soft limit can fire again
  return *sa;
}

Sa* Sad::find(uint32_t spi, const Addr& dst, uint8_t proto) const {
  if (sas_.size() <= kLinear) {  // a few SAs: a scan beats hashing (no division)
    for (const auto& sa : sas_) {
      const SaConfig& c = sa->cfg;
      if (c.spi == spi && c.proto == proto && c.dst.family == dst.family &&
          std::memcmp(c.dst.bytes, dst.bytes, 16) == 0)  // unused bytes are 0 on both
        return sa.get();
    }
    return nullptr;
  }
  auto it = by_id_.find(Key(spi, proto, dst));
  return it == by_id_.end() ? nullptr : sas_[it->second].get();
}

Sa* Sad::find_tmpl(const Addr& src, const Addr& dst, uint8_t proto, Mode mode, uint32_t reqid,
                   const FlowKey* flow) const {
  for (auto& sa : sas_) {
    const auto& c = sa->cfg;
    if (c.proto == proto && c.mode == mode && (!reqid || c.reqid == reqid) &&
        (!src.family || c.src == src) && (!dst.family || c.dst == dst) &&
        (!flow || selector_match(c.sel, *flow)))
      return sa.get();
  }
  return nullptr;
}

}  // namespace knod::xfrm
