#include "xfrm/install.h"

#include <fmt/core.h>

#include "base/error.h"

namespace knod::xfrm {

void install(const XfrmConfig& cfg, Sad& sad, Spd& spd) {
  for (size_t i = 0; i < cfg.states.size(); ++i) {
    try {
      if (i < cfg.state_update.size() && cfg.state_update[i])
        sad.update(cfg.states[i]);
      else
        sad.add(cfg.states[i]);
    } catch (const Error& e) {
      if (i < cfg.state_where.size() && !cfg.state_where[i].empty())
        throw Error(fmt::format("{}: {}", cfg.state_where[i], e.what()));
      throw;
    }
  }
  for (size_t i = 0; i < cfg.policies.size(); ++i) {
    try {
      if (i < cfg.policy_update.size() && cfg.policy_update[i])
        spd.update(cfg.policies[i]);
      else
        spd.add(cfg.policies[i]);
    } catch (const Error& e) {
      if (i < cfg.policy_where.size() && !cfg.policy_where[i].empty())
        throw Error(fmt::format("{}: {}", cfg.policy_where[i], e.what()));
      throw;
    }
  }
}

}  // namespace knod::xfrm
