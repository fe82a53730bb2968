// Security Association Database: installed SAs, found by (SPI, dst, proto) for inbound
// packets (RFC 4301 §4.4.2) and by template for outbound ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "xfrm/sa.h"

namespace knod::xfrm {

struct FlowKey;  // xfrm/spd.h

class Sad {
 public:
  /// Installs an SA (`ip xfrm state add`). Throws knod::Error "... File exists" when an SA
  /// with the same (dst, SPI, proto) is installed (the kernel: EEXIST, xfrm_state_add).
  Sa& add(const SaConfig& cfg);
  /// `ip xfrm state update`: for the installed SA with cfg's (dst, SPI, proto), takes the new
  /// lifetime limits and UDP encapsulation ports/address and keeps everything else (keys,
  /// algorithms, sequence numbers, replay window, counters), as xfrm_state_update does for
  /// an ESP SA. Throws knod::Error "... No such process" when none is installed (ESRCH) and
  /// "... Invalid argument" when the update adds or removes encapsulation (EINVAL).
  Sa& update(const SaConfig& cfg);
  /// Inbound lookup; nullptr when none.
  Sa* find(uint32_t spi, const Addr& dst, uint8_t proto = kProtoEsp) const;
  /// First SA with these outer addresses, proto, mode and (when non-zero) reqid whose `sel`
  /// (when set) matches `flow` (when given), as xfrm_state_look_at skips a state whose
  /// selector does not match the flow; nullptr if none.
  Sa* find_tmpl(const Addr& src, const Addr& dst, uint8_t proto, Mode mode, uint32_t reqid,
                const FlowKey* flow = nullptr) const;
  uint32_t size() const { return uint32_t(sas_.size()); }
  Sa& operator[](uint32_t i) const { return *sas_[i]; }
  /// True when inbound UDP to `port` is ESP-in-UDP (RFC 3948): 4500, or a port of an SA's
  /// `encap espinudp SPORT DPORT`. The kernel decapsulates only on such an encap socket;
  /// other UDP (DNS, IKE on 500...) is not IPsec and is handed on unchanged.
  bool encap_port(uint16_t port) const {
    if (port == kNatTPort) return true;
    for (uint16_t p :
         encap_ports_)  // a handful of ports (no <algorithm>: device code includes this)
      if (p == port) return true;
    return false;
  }
  static constexpr uint16_t kNatTPort = 4500;  ///< IANA ipsec-nat-t (RFC 3948 §2)

 private:
  /// (SPI, proto, dst): the SA's identity (RFC 4301 §4.4.2.1). No allocation per lookup.
  struct Key {
    uint32_t spi = 0;
    uint8_t proto = 0, family = 0;
    uint8_t addr[16] = {};
    Key(uint32_t s, uint8_t p, const Addr& a) : spi(s), proto(p), family(a.family) {
      std::memcpy(addr, a.bytes, a.len());
    }
    bool operator==(const Key& o) const {
      return spi == o.spi && proto == o.proto && family == o.family &&
             std::memcmp(addr, o.addr, 16) == 0;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t a, b;
      std::memcpy(&a, k.addr, 8), std::memcpy(&b, k.addr + 8, 8);
      uint64_t h = (uint64_t(k.spi) << 16 | uint64_t(k.proto) << 8 | k.family) ^ a * 31 ^ b;
      return size_t(h * 0x9e3779b97f4a7c15ull >> 17);
    }
  };
  static constexpr size_t kLinear = 8;  ///< up to this many SAs, find() scans
  std::vector<std::unique_ptr<Sa>> sas_;
  std::vector<uint16_t> encap_ports_;  ///< encap sport/dport of every SA (with repeats)
  void note_encap(const SaConfig& c) {
    if (c.encap) encap_ports_.insert(encap_ports_.end(), {c.encap_sport, c.encap_dport});
  }
  std::unordered_map<Key, uint32_t, KeyHash> by_id_;
};

}  // namespace knod::xfrm
