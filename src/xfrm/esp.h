// ESP (RFC 4303) over batches of packets, VPP style: per-packet "prepare" functions fill
// CryptoOp records, one engine call runs the vector, per-packet "finish" functions complete.
// Packets are raw IP (no link header). The per-packet functions take plain structs, do not
// allocate or throw, and can be compiled for a device.
#pragma once

#include <cstdint>

#include "xfrm/crypto/engine.h"
#include "xfrm/sad.h"
#include "xfrm/spd.h"

namespace knod::xfrm {

/// A batch of packets (same layout as device::Batch: slot i at frames + i * stride).
/// In: data_off/data_len. Out: data_off/data_len rewritten, drop[i], sa[i] (kNoSaIndex if none).
/// Outbound needs headroom (<= 80 B) before and tailroom (<= 16 + 2 + 32 B) after each packet.
struct PacketBatch {
  uint32_t count = 0;
  uint32_t stride = 0;  ///< bytes per slot
  uint8_t* frames = nullptr;
  uint32_t* data_off = nullptr;  ///< bytes from slot start to the IP header
  uint32_t* data_len = nullptr;  ///< bytes of the IP packet
  uint8_t* drop = nullptr;       ///< Drop per packet
  uint32_t* sa = nullptr;        ///< Sa::index used per packet
};
constexpr uint32_t kNoSaIndex = 0xffffffff;

/// Per-packet state carried from prepare to finish.
struct PktState {
  uint64_t seq = 0;      ///< full 64-bit sequence number
  uint32_t esp_off = 0;  ///< inbound: offset of the ESP header within the slot
  uint32_t ip_len =
      0;  ///< inbound: outer IP header bytes, IPv6 extension headers included (transport: kept)
  uint32_t nh_off = 0;   ///< inbound: offset from the IP header of the Next Header (IPv4: protocol)
                         ///< byte naming ESP/UDP
  uint32_t udp_len = 0;  ///< inbound: 8 when UDP-encapsulated
};

/// Outbound, one packet: encapsulate the IP packet at slot+off (len bytes; slot holds `cap`
/// bytes) for SA `sa` with sequence number `seq`, rewriting off/len, and fill `op`.
/// The IV for AEADs is the 64-bit seq (RFC 4106 §3.1); CBC IVs are left for the caller.
Drop esp_out_prepare(const SaConfig& sa, uint32_t sa_index, uint64_t seq, uint8_t* slot,
                     uint32_t cap, uint32_t& off, uint32_t& len, CryptoOp& op);
/// The checks of esp_out_prepare alone (nothing written): kOk when it would succeed, else its
/// drop reason. Lets the caller spend a sequence number only on packets that go out.
Drop esp_out_check(const SaConfig& sa, const uint8_t* slot, uint32_t cap, uint32_t off,
                   uint32_t len);

/// Inbound, one packet, step 1: parse outer IP (+UDP for NAT-T) and ESP header, look up the
/// SA, infer the ESN, pre-check the window (no change), fill `op`.
/// `batch_top` (nullable, indexed by Sa::index): highest sequence number pre-checked so far
/// in this batch; ESN inference uses max(window top, batch_top) so that a batch crossing a
/// 2^32 boundary infers as if processed one by one. Updated when the pre-check passes.
/// `unsettled` (with batch_top): set when that inference differs from the one against the
/// window alone. The packet's high bits then depend on whether the batch's earlier packets
/// pass their ICV (RFC 4303 A2.2 infers from the window as the packets before it left it; a
/// forged packet far ahead would otherwise shift the bits of every packet after it): nothing
/// is filled, and the caller finishes the packets before it, then prepares it again.
Drop esp_in_prepare(const Sad& sad, uint8_t* slot, uint32_t off, uint32_t len, Sa*& sa,
                    PktState& st, CryptoOp& op, uint64_t* batch_top = nullptr,
                    bool* unsettled = nullptr);
/// Step 3, after the engine verified `op` (call under the SA's lock, in packet order):
/// re-check the window, lifetime_admit (hard limit: kLimit), the ICV, advance the window,
/// check padding, rebuild the inner/transport packet.
Drop esp_in_finish(Sa& sa, uint8_t* slot, uint32_t& off, uint32_t& len, const PktState& st,
                   const CryptoOp& op);

/// Gives every SA of `sad` to `eng` (control path).
void engine_load(CryptoEngine& eng, const Sad& sad);

/// Outbound batch with the SA of each packet already chosen (sa_of[i], kNoSaIndex: drop).
/// Lifetime per packet before it is counted: hard limit -> kLimit (XfrmOutStateExpired, and
/// every later packet of the SA), soft limit -> one stats.soft_expires event.
void esp_encrypt_batch(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats);
/// Outbound admission of one packet of `len` bytes on `sa`, in packet order: its share of the
/// lifetime (xfrm_state_check_expire: soft events counted in stats) then the next sequence
/// number (RFC 4303 §3.3.3: never cycles). kOk with *seq set, else kLimit or kSeqOverflow.
Drop esp_out_admit(Sa& sa, uint32_t len, Counters& stats, uint64_t* seq);
/// Inbound batch: pre-check, decrypt/verify, then re-check and advance serialized per SA,
/// so a batch holding a duplicate accepts exactly one copy. Each decrypted packet must then
/// match its SA's `sel` (else kStateMismatch) and, when `spd` has a `dir in` policy for it,
/// that policy (kPolBlock, kTmplMismatch), as the kernel's __xfrm_policy_check.
/// Lifetime (xfrm_state_check_expire) is checked per packet after the replay check:
/// hard limit -> kLimit (XfrmInStateExpired), soft limit -> stats.soft_expires.
void esp_decrypt_batch(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats,
                       const Spd* spd = nullptr);

/// Outbound: SPD lookup per packet (dir out policy -> tmpl -> SA), then esp_encrypt_batch.
/// Packets that match no policy pass unchanged with drop = kNoPolicy (counted, not dropped
/// by the CLI). Inbound: esp_decrypt_batch with `spd`'s `dir in` policies.
void process_batch(Sad& sad, const Spd& spd, CryptoEngine& eng, Dir dir, PacketBatch& b,
                   Counters& stats);

}  // namespace knod::xfrm
