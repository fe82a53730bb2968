// struct bpf_spin_lock { __u32 val; } inside a map value (HASH and ARRAY only, as the kernel's
// map_check_btf): the lock word, and the value copies that leave it alone (copy_map_value,
// copy_map_value_locked in include/linux/bpf.h).
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "maps/map.h"

namespace knod::maps {

/// How long value_lock() waits before it gives up. The kernel's verifier pairs every
/// bpf_spin_lock with an unlock and forbids direct stores to the word; knod cannot prove
/// either, so a word left non-zero makes value_lock() fail instead of hanging the run. A
/// holder that user space preempts (the kernel's cannot be) is back well within a second.
constexpr std::chrono::milliseconds kSpinLockLimit{1000};

/// Takes the lock word at `word` (4-byte aligned): spins, then yields the CPU between tries;
/// false when it stayed held kSpinLockLimit.
inline bool value_lock(uint32_t* word) {
  std::atomic_ref<uint32_t> v(*word);
  auto try_once = [&] {
    uint32_t expected = 0;
    return v.load(std::memory_order_relaxed) == 0 &&
           v.compare_exchange_weak(expected, 1, std::memory_order_acquire);
  };
  for (int i = 0; i < 1024; ++i) {
    if (try_once()) return true;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  const auto until = std::chrono::steady_clock::now() + kSpinLockLimit;
  for (uint32_t i = 0;; ++i) {
    if (try_once()) return true;
    std::this_thread::yield();
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return false;
  }
}

inline void value_unlock(uint32_t* word) {
  std::atomic_ref<uint32_t>(*word).store(0, std::memory_order_release);
}

/// copy_map_value(): `def.value_size` bytes from `src` to `dst`, but not the lock word.
inline void copy_value(const MapDef& def, void* dst, const void* src) {
  if (def.spin_lock_off < 0) {
    std::memcpy(dst, src, def.value_size);
    return;
  }
  const uint32_t at = uint32_t(def.spin_lock_off), after = at + 4;
  std::memcpy(dst, src, at);
  std::memcpy(static_cast<uint8_t*>(dst) + after, static_cast<const uint8_t*>(src) + after,
              def.value_size - after);
}

/// A new element's value (check_and_init_map_value): `src` copied, the lock word zero.
inline void init_value(const MapDef& def, void* dst, const void* src) {
  copy_value(def, dst, src);
  if (def.spin_lock_off >= 0) std::memset(static_cast<uint8_t*>(dst) + def.spin_lock_off, 0, 4);
}

/// copy_map_value_locked() (a BPF_F_LOCK update): the copy under the value's own lock.
/// -EBUSY when the lock is never released (see kSpinLockLimit); the kernel cannot fail here.
inline long copy_value_locked(const MapDef& def, void* dst, const void* src) {
  auto* word = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(dst) + def.spin_lock_off);
  if (!value_lock(word)) return -EBUSY;
  copy_value(def, dst, src);
  value_unlock(word);
  return 0;
}

}  // namespace knod::maps
