// A Security Association as `ip xfrm state add` describes it (linux/xfrm.h terms), plus
// its run-time state (outbound sequence counter, inbound replay window, counters).
#pragma once

#include <atomic>
#include <cstdint>

#include "xfrm/addr.h"
#include "xfrm/drop.h"
#include "xfrm/replay.h"

namespace knod::xfrm {

constexpr uint8_t kProtoEsp = 50;  ///< IPPROTO_ESP

enum class Mode : uint8_t { kTransport, kTunnel };

/// Encryption transform. AEADs carry a 4-byte salt after the key (RFC 4106 §8.1, RFC 7634 §2).
enum class Cipher : uint8_t {
  kNull,              ///< cipher_null (RFC 2410)
  kAesCbc,            ///< cbc(aes) (RFC 3602), 16-byte explicit IV
  kDes3Cbc,           ///< cbc(des3_ede) (RFC 2451), 8-byte IV: decrypt of old captures
  kAesGcm,            ///< rfc4106(gcm(aes))
  kAesGmac,           ///< rfc4543(gcm(aes)): authentication only, payload in clear
  kChaCha20Poly1305,  ///< rfc7539esp(chacha20,poly1305) (RFC 7634)
};
enum class Auth : uint8_t { kNone, kHmacSha1, kHmacSha256, kHmacSha384, kHmacSha512 };

/// XFRM_STATE_* flags (`flag ...`) and XFRM_SA_XFLAG_* (`extra-flag ...`).
enum SaFlag : uint32_t {
  kFlagNoEcn = 1,                  ///< XFRM_STATE_NOECN
  kFlagDecapDscp = 2,              ///< XFRM_STATE_DECAP_DSCP
  kFlagNoPmtuDisc = 4,             ///< XFRM_STATE_NOPMTUDISC
  kFlagEsn = 128,                  ///< XFRM_STATE_ESN
  kXFlagDontEncapDscp = 1u << 16,  ///< XFRM_SA_XFLAG_DONT_ENCAP_DSCP
};

/// Traffic selector (`sel ...` on a state, the policy's own selector). Port 0: any.
struct Selector {
  Prefix src, dst;
  uint8_t proto = 0;  ///< 0: any
  uint16_t sport = 0, dport = 0;
};

/// iproute2's XFRM_INF: no limit. `limit ...` sets a number as given, 0 included (the kernel
/// then expires the SA at its first packet: xfrm_state_check_expire compares `>=`).
constexpr uint64_t kXfrmInf = ~uint64_t(0);

/// `limit ...`, in bytes and packets; kXfrmInf where not set.
struct Limits {
  uint64_t byte_soft = kXfrmInf, byte_hard = kXfrmInf, packet_soft = kXfrmInf,
           packet_hard = kXfrmInf;
};

/// xfrm_init_replay (net/xfrm/xfrm_replay.c): an inbound ESN state needs a replay window, so
/// the parser and Sad::add refuse `flag esn` with replay-window 0 (the kernel's EINVAL).
inline constexpr const char* kEsnNeedsWindow =
    "xfrm: flag esn needs replay-window 1 or more (the kernel refuses 0: EINVAL)";

/// The static part of an SA (what the parser fills; copyable).
struct SaConfig {
  Addr src, dst;
  uint8_t proto = kProtoEsp;
  uint32_t spi = 0;  ///< host byte order
  Mode mode = Mode::kTransport;
  uint32_t reqid = 0;
  uint32_t replay_window = 0;  ///< packets, 0..4096
  uint32_t flags = 0;          ///< SaFlag bits
  bool encap = false;          ///< encap espinudp (RFC 3948)
  uint16_t encap_sport = 0, encap_dport = 0;
  Addr encap_oa;
  Selector sel;
  Limits limits;
  uint64_t oseq = 0;  ///< replay-oseq[-hi]: last sequence number sent (next packet: +1)
  uint64_t seq = 0;   ///< replay-seq[-hi]: highest sequence number received (window top)
  Cipher cipher = Cipher::kNull;
  Auth auth = Auth::kNone;
  uint8_t enc_key[32] = {};  ///< cipher key without salt
  uint8_t enc_key_len = 0;   ///< bytes
  uint8_t salt[4] = {};      ///< AEAD salt (last 4 key bytes given to ip-xfrm)
  uint8_t auth_key[64] = {};
  uint8_t auth_key_len = 0;
  uint8_t icv_len = 0;  ///< bytes on the wire (AEAD ICV or truncated HMAC)

  bool esn() const { return flags & kFlagEsn; }
  bool aead() const {
    return cipher == Cipher::kAesGcm || cipher == Cipher::kAesGmac ||
           cipher == Cipher::kChaCha20Poly1305;
  }
  /// Bytes of explicit IV after the ESP header: 8 for AEADs, the block for CBC, 0 for null.
  uint32_t iv_len() const {
    return aead() ? 8 : cipher == Cipher::kAesCbc ? 16 : cipher == Cipher::kDes3Cbc ? 8 : 0;
  }
  /// Payload+trailer alignment (RFC 4303 §2.4): cipher block for CBC, else 4.
  uint32_t align() const {
    return cipher == Cipher::kAesCbc ? 16 : cipher == Cipher::kDes3Cbc ? 8 : 4;
  }
};

/// Per-SA counters as `ip -s xfrm state` prints them, plus drops by reason.
struct SaStats {
  Counters c;
};

/// An installed SA: config plus run-time state. Not copyable (atomics).
/// Outbound: `oseq` advances by compare-exchange (any thread; never past its last value).
/// Inbound: `replay` changes only under `lock` (the serialized "advance" phase of a batch).
struct Sa {
  SaConfig cfg;
  uint32_t index = 0;             ///< slot in the Sad; also the crypto engine's SA id
  std::atomic<uint64_t> oseq{0};  ///< last sequence number sent (first packet gets 1)
  ReplayState replay;             ///< inbound window
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  SaStats stats;                                       ///< updated under `lock`
  std::atomic<uint64_t> out_bytes{0}, out_packets{0};  ///< for limits
  std::atomic<bool> dying{false};         ///< a soft limit was reached (the kernel's km.dying)
  std::atomic<bool> expired{false};       ///< a hard limit was reached (XFRM_STATE_EXPIRED)
  std::atomic<uint64_t> soft_expires{0};  ///< soft-expire events (0 or 1 until `state update`)
};

/// The kernel's xfrm_state_check_expire (net/xfrm/xfrm_state.c) before one more packet, with
/// `packets`/`bytes` counted so far on the SA: kHard when a hard limit is reached (the SA
/// expires, the packet is dropped), kSoft when a soft limit is reached (one expire event,
/// the packet goes on), else kOk. kXfrmInf is never reached (counts stop short of 2^64).
enum class Lifetime : uint8_t { kOk, kSoft, kHard };
inline Lifetime lifetime_check(const Limits& l, uint64_t packets, uint64_t bytes) {
  if (packets >= l.packet_hard || bytes >= l.byte_hard) return Lifetime::kHard;
  if (packets >= l.packet_soft || bytes >= l.byte_soft) return Lifetime::kSoft;
  return Lifetime::kOk;
}

/// lifetime_check on `sa` with its state: marks it expired (kHard, and for every packet after)
/// or dying (kSoft: returns true once, the expire event). Returns true when the packet may go on.
/// `soft_event` is set when this packet fired the soft expire.
inline bool lifetime_admit(Sa& sa, uint64_t packets, uint64_t bytes, bool& soft_event) {
  soft_event = false;
  if (sa.expired.load(std::memory_order_relaxed)) return false;
  switch (lifetime_check(sa.cfg.limits, packets, bytes)) {
    case Lifetime::kHard:
      sa.expired.store(true, std::memory_order_relaxed);
      return false;
    case Lifetime::kSoft:
      if (!sa.dying.load(std::memory_order_relaxed) &&
          !sa.dying.exchange(true, std::memory_order_relaxed)) {
        sa.soft_expires.fetch_add(1, std::memory_order_relaxed);
        soft_event = true;
      }
      return true;
    case Lifetime::kOk:
      return true;
  }
  return true;
}

}  // namespace knod::xfrm
