// Inbound anti-replay window as a bitmap ring (RFC 6479), windows up to 4096 packets.
// Plain struct and inline functions (no allocation): callable from device code.
#pragma once

#include <cstdint>

namespace knod::xfrm {

constexpr uint32_t kMaxReplayWindow = 4096;  ///< packets (iproute2 replay-window)
/// Ring words: a power of two holding window/64 + 1 words (RFC 6479 §2: one spare word).
constexpr uint32_t kReplayWords = 128;

/// Window state: `top` is the highest 64-bit sequence number accepted (0: none yet);
/// bit (s mod ring bits) of `ring` is set when s was accepted. `window` is W in packets.
struct ReplayState {
  uint64_t top = 0;
  uint32_t window = 0;
  uint32_t words = 1;  ///< ring words in use: a power of two > window / 64
  uint64_t ring[kReplayWords] = {};
};

enum class ReplayCheck : uint8_t { kOk, kReplay, kTooOld };

/// Sizes the ring for `window` packets (0..4096) and clears it.
inline void replay_init(ReplayState& r, uint32_t window, uint64_t top = 0) {
  r = ReplayState{};
  r.window = window;
  r.top = top;
  uint32_t need = (window + 63) / 64 + 1;  // whole words plus one spare
  while (r.words < need) r.words <<= 1;
}

/// Checks `seq` (full 64-bit) against the window without changing it (RFC 4303 §3.4.3).
/// Needs window >= 1: with replay-window 0 ESP input checks nothing (esp_in.cpp window_check).
inline ReplayCheck replay_check(const ReplayState& r, uint64_t seq) {
  if (seq > r.top) return ReplayCheck::kOk;
  uint64_t diff = r.top - seq;
  if (diff >= r.window) return ReplayCheck::kTooOld;
  uint64_t bit = seq & (uint64_t(r.words) * 64 - 1);
  return (r.ring[bit >> 6] >> (bit & 63)) & 1 ? ReplayCheck::kReplay : ReplayCheck::kOk;
}

/// Marks `seq` accepted, sliding the window when seq > top (RFC 6479 §3: clear whole words).
/// Call only after replay_check(seq) == kOk and the ICV verified.
inline void replay_advance(ReplayState& r, uint64_t seq) {
  uint64_t mask = uint64_t(r.words) * 64 - 1;
  if (seq > r.top) {
    uint64_t old_word = (r.top & mask) >> 6, new_word_abs = seq >> 6, old_abs = r.top >> 6;
    uint64_t n = new_word_abs - old_abs;
    if (n > r.words) n = r.words;
    for (uint64_t i = 1; i <= n; ++i) r.ring[(old_word + i) & (r.words - 1)] = 0;
    r.top = seq;
  }
  uint64_t bit = seq & mask;
  r.ring[bit >> 6] |= uint64_t(1) << (bit & 63);
}

}  // namespace knod::xfrm
