#include "xfrm/install.h"

#include <fmt/core.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace knod::xfrm {

namespace {

/// Installs `items` in order: `update(x)` where `is_update[i]`, else `add(x)`; an error is
/// prefixed with `where[i]` ("FILE:LINE") when known.
template <class T, class Add, class Update>
void install_each(const std::vector<T>& items, const std::vector<uint8_t>& is_update,
                  const std::vector<std::string>& where, Add add, Update update) {
  for (size_t i = 0; i < items.size(); ++i) {
    try {
      if (i < is_update.size() && is_update[i])
        update(items[i]);
      else
        add(items[i]);
    } catch (const Error& e) {
      if (i < where.size() && !where[i].empty())
        throw Error(fmt::format("{}: {}", where[i], e.what()));
      throw;
    }
  }
}

}  // namespace

void install(const XfrmConfig& cfg, Sad& sad, Spd& spd) {
  install_each(
      cfg.states, cfg.state_update, cfg.state_where, [&](const SaConfig& c) { sad.add(c); },
      [&](const SaConfig& c) { sad.update(c); });
  install_each(
      cfg.policies, cfg.policy_update, cfg.policy_where, [&](const Policy& p) { spd.add(p); },
      [&](const Policy& p) { spd.update(p); });
}

}  // namespace knod::xfrm
