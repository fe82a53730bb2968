// Per-packet results and counters (names follow `ip -s xfrm state` and /proc/net/xfrm_stat).
#pragma once

#include <cstdint>

namespace knod::xfrm {

/// Outcome of one packet. kOk: processed; every other value is a counted drop.
enum class Drop : uint8_t {
  kOk = 0,
  kShort,          ///< packet shorter than its headers / ESP trailer (XfrmInHdrError)
  kNotEsp,         ///< not ESP (or UDP-encapsulated ESP) to a known SA address
  kUnknownSpi,     ///< no SA for (SPI, dst, proto) (XfrmInNoStates)
  kReplay,         ///< sequence number already seen ("replay")
  kTooOld,         ///< left of the replay window ("replay-window")
  kIntegrity,      ///< ICV check failed ("integrity failed")
  kBadPadding,     ///< pad bytes not 1,2,3... or pad length too long (RFC 4303 §2.4)
  kDummy,          ///< next header 59: dummy packet (RFC 4303 §2.6), dropped on purpose
  kNoPolicy,       ///< outbound packet matched no policy (passed through unchanged)
  kNoSa,           ///< policy template names no installed SA (XfrmOutNoStates)
  kSeqOverflow,    ///< outbound sequence number would cycle (RFC 4303 §3.3.3)
  kTooBig,         ///< no headroom/tailroom for the ESP headers
  kLimit,          ///< SA hard byte/packet limit reached (XfrmOutStateExpired/XfrmInStateExpired)
  kMalformed,      ///< bad IP header (version, lengths)
  kStateMismatch,  ///< decrypted packet outside the SA's `sel` (XfrmInStateMismatch)
  kPolBlock,      ///< decrypted packet matches a `dir in` policy with action block (XfrmInPolBlock)
  kTmplMismatch,  ///< the `dir in` policy's tmpl does not name the SA used (XfrmInTmplMismatch)
  kNoPols,        ///< decrypted by a tunnel-mode SA, no `dir in` policy matches (XfrmInNoPols)
  kCount
};

/// Short name of a Drop ("replay", "integrity-failed", ...).
const char* drop_name(Drop d);

/// The /proc/net/xfrm_stat counter the kernel increments for this outcome (`inbound`: the
/// packet was decrypted, else encrypted), e.g. "XfrmInNoStates", "XfrmInStateSeqError",
/// "XfrmOutStateExpired"; nullptr when the kernel counts nothing there: kOk, kNotEsp (not
/// IPsec: handed to the stack), kDummy (next header 59, dropped by the stack) and kNoPolicy
/// (an outbound packet no policy covers leaves unencrypted).
/// Source: Documentation/networking/xfrm_proc.rst, net/xfrm/xfrm_input.c, xfrm_output.c,
/// xfrm_policy.c (__xfrm_policy_check).
const char* xfrm_stat_name(Drop d, bool inbound);

/// Counters for one SA or for a whole run. Units: packets, and bytes of the ESP packets (IP
/// header included): as made for outbound, as received for inbound; a run's are its SAs' sum.
struct Counters {
  uint64_t packets = 0;  ///< processed successfully
  uint64_t bytes = 0;    ///< bytes of those packets, as above
  uint64_t drops[uint32_t(Drop::kCount)] = {};
  /// Soft-expire events: an SA reached `limit byte-soft/packet-soft` (once per SA, as the
  /// kernel's km.dying latch; XFRM_MSG_EXPIRE with hard 0). Not drops: the packet goes on.
  uint64_t soft_expires = 0;
  uint64_t& operator[](Drop d) { return drops[uint32_t(d)]; }
  uint64_t operator[](Drop d) const { return drops[uint32_t(d)]; }
  void add(const Counters& o) {
    packets += o.packets;
    bytes += o.bytes;
    soft_expires += o.soft_expires;
    for (uint32_t i = 0; i < uint32_t(Drop::kCount); ++i) drops[i] += o.drops[i];
  }
};

}  // namespace knod::xfrm
