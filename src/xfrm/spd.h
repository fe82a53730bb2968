// Security Policy Database for outbound packets (`ip xfrm policy add ... dir out tmpl ...`):
// the first matching policy by priority picks the SA template (RFC 4301 §4.4.1).
#pragma once

#include <cstdint>
#include <vector>

#include "xfrm/sa.h"

namespace knod::xfrm {

enum class Dir : uint8_t { kIn, kOut, kFwd };
enum class Action : uint8_t { kAllow, kBlock };

/// `tmpl src X dst Y proto esp reqid N mode M`.
struct Tmpl {
  Addr src, dst;
  uint8_t proto = kProtoEsp;
  uint32_t spi = 0;
  uint32_t reqid = 0;
  Mode mode = Mode::kTransport;
};

struct Policy {
  Selector sel;
  Dir dir = Dir::kOut;
  Action action = Action::kAllow;
  uint32_t priority = 0;
  bool has_tmpl = false;
  Tmpl tmpl;
};

/// The 5-tuple a policy selector sees (addresses in network order, ports host order).
struct FlowKey {
  Addr src, dst;
  uint8_t proto = 0;
  uint16_t sport = 0, dport = 0;
};

/// True when `k` matches selector `s` (prefixes, proto and ports; 0 = any).
bool selector_match(const Selector& s, const FlowKey& k);

/// The flow of the IP packet at `ip` (`len` bytes; ports for TCP and UDP; IPv6: the protocol
/// after hop-by-hop, routing and destination-options headers). False when it is not
/// IPv4/IPv6 or shorter than its header.
bool flow_key(const uint8_t* ip, uint32_t len, FlowKey& k);

/// Inbound: does SA `sa` satisfy template `t`? The kernel's xfrm_state_ok: same proto and
/// mode, spi and reqid when the template names them, and for tunnel mode the template's
/// src (when set) equal to the SA's.
bool tmpl_match(const Tmpl& t, const SaConfig& sa);

class Spd {
 public:
  /// `ip xfrm policy add`. Throws knod::Error "... File exists" when a policy of the same
  /// dir and selector is installed (the kernel: EEXIST, xfrm_policy_insert with excl).
  void add(const Policy& p);
  /// `ip xfrm policy update`: replaces the policy of the same dir and selector, else adds.
  void update(const Policy& p);
  /// Best (lowest priority value, then first added) policy of `dir` matching `k`; or nullptr.
  const Policy* lookup(Dir dir, const FlowKey& k) const;
  uint32_t size() const { return uint32_t(pols_.size()); }
  /// Number of policies of direction `dir` (kept by add(): asked per packet).
  uint32_t count(Dir dir) const { return count_[uint8_t(dir)]; }
  const Policy& operator[](uint32_t i) const { return pols_[i]; }

 private:
  std::vector<Policy> pols_;
  uint32_t count_[3] = {};  ///< by Dir
};

}  // namespace knod::xfrm
