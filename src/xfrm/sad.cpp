#include "xfrm/sad.h"

#include <fmt/core.h>

#include "base/error.h"

namespace knod::xfrm {
namespace {
std::vector<uint8_t> key_of(const Addr& a) {
  return std::vector<uint8_t>(a.bytes, a.bytes + a.len());
}
}  // namespace

Sa& Sad::add(const SaConfig& cfg) {
  auto key = std::make_tuple(cfg.spi, cfg.proto, key_of(cfg.dst));
  if (by_id_.count(key))
    throw Error(fmt::format("xfrm: state spi 0x{:08x} dst {} exists", cfg.spi, to_string(cfg.dst)));
  auto sa = std::make_unique<Sa>();
  sa->cfg = cfg;
  sa->index = uint32_t(sas_.size());
  replay_init(sa->replay, cfg.replay_window, cfg.seq);
  sa->oseq = cfg.oseq;
  by_id_[key] = sa->index;
  sas_.push_back(std::move(sa));
  return *sas_.back();
}

Sa* Sad::find(uint32_t spi, const Addr& dst, uint8_t proto) const {
  auto it = by_id_.find(std::make_tuple(spi, proto, key_of(dst)));
  return it == by_id_.end() ? nullptr : sas_[it->second].get();
}

Sa* Sad::find_tmpl(const Addr& src, const Addr& dst, uint8_t proto, Mode mode,
                   uint32_t reqid) const {
  for (auto& sa : sas_) {
    const auto& c = sa->cfg;
    if (c.proto == proto && c.mode == mode && (!reqid || c.reqid == reqid) &&
        (!src.family || c.src == src) && (!dst.family || c.dst == dst))
      return sa.get();
  }
  return nullptr;
}

}  // namespace knod::xfrm
