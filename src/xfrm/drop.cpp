#include "xfrm/drop.h"

namespace knod::xfrm {

const char* drop_name(Drop d) {
  static const char* const names[] = {
      "ok",      "short",         "not-esp",          "unknown-spi",
      "replay",  "replay-window", "integrity-failed", "bad-padding",
      "dummy",   "no-policy",     "no-state",         "seq-overflow",
      "too-big", "limit",         "malformed"};
  static_assert(sizeof names / sizeof *names == uint32_t(Drop::kCount));
  return uint32_t(d) < uint32_t(Drop::kCount) ? names[uint32_t(d)] : "?";
}

}  // namespace knod::xfrm
