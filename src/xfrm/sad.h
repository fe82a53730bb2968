// Security Association Database: installed SAs, found by (SPI, dst, proto) for inbound
// packets (RFC 4301 §4.4.2) and by template for outbound ones.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "xfrm/sa.h"

namespace knod::xfrm {

class Sad {
 public:
  /// Installs an SA (`ip xfrm state add`). Throws knod::Error when (SPI, dst, proto) exists.
  Sa& add(const SaConfig& cfg);
  /// Inbound lookup; nullptr when none.
  Sa* find(uint32_t spi, const Addr& dst, uint8_t proto = kProtoEsp) const;
  /// First SA with these outer addresses, proto, mode and (when non-zero) reqid; nullptr if none.
  Sa* find_tmpl(const Addr& src, const Addr& dst, uint8_t proto, Mode mode, uint32_t reqid) const;
  uint32_t size() const { return uint32_t(sas_.size()); }
  Sa& operator[](uint32_t i) const { return *sas_[i]; }

 private:
  std::vector<std::unique_ptr<Sa>> sas_;
  std::map<std::tuple<uint32_t, uint8_t, std::vector<uint8_t>>, uint32_t> by_id_;
};

}  // namespace knod::xfrm
