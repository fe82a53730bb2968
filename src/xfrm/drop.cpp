#include "xfrm/drop.h"

namespace knod::xfrm {

const char* drop_name(Drop d) {
  static const char* const names[] = {
      "ok",           "short",         "not-esp",          "unknown-spi",
      "replay",       "replay-window", "integrity-failed", "bad-padding",
      "dummy",        "no-policy",     "no-state",         "seq-overflow",
      "too-big",      "expired",       "malformed",        "state-mismatch",
      "policy-block", "tmpl-mismatch", "no-policy-in"};
  static_assert(sizeof names / sizeof *names == uint32_t(Drop::kCount));
  return uint32_t(d) < uint32_t(Drop::kCount) ? names[uint32_t(d)] : "?";
}

const char* xfrm_stat_name(Drop d, bool in) {
  switch (d) {
    case Drop::kShort:
    case Drop::kMalformed:
      return in ? "XfrmInHdrError" : "XfrmOutError";
    case Drop::kUnknownSpi:
      return "XfrmInNoStates";
    case Drop::kReplay:
    case Drop::kTooOld:
      return "XfrmInStateSeqError";
    case Drop::kIntegrity:
    case Drop::kBadPadding:
      return "XfrmInStateProtoError";
    case Drop::kNoSa:
      return "XfrmOutNoStates";
    case Drop::kSeqOverflow:
      return "XfrmOutStateSeqError";
    case Drop::kTooBig:
      return "XfrmOutError";
    case Drop::kLimit:
      return in ? "XfrmInStateExpired" : "XfrmOutStateExpired";
    case Drop::kStateMismatch:
      return "XfrmInStateMismatch";
    case Drop::kPolBlock:
      return "XfrmInPolBlock";
    case Drop::kTmplMismatch:
      return "XfrmInTmplMismatch";
    case Drop::kNoPols:
      return "XfrmInNoPols";
    default:
      return nullptr;
  }
}

}  // namespace knod::xfrm
