// Fixed array of optional values for the fd-style arrays (PROG_ARRAY, DEVMAP, CPUMAP, XSKMAP,
// ARRAY_OF_MAPS): slot i holds value_size bytes and a present flag. Preallocated; presence
// flips with release/acquire so program-side readers never see a half-written slot flag.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "maps/util.h"

namespace knod::maps {

class SlotArray {
 public:
  SlotArray(uint32_t n, uint32_t value_size)
      : n_(n),
        vs_(value_size),
        data_(size_t(n) * round_up8(value_size), 0),
        present_(new std::atomic<uint8_t>[n]()) {}
  uint32_t size() const { return n_; }
  bool present(uint32_t i) const { return present_[i].load(std::memory_order_acquire) != 0; }
  uint8_t* at(uint32_t i) { return data_.data() + size_t(i) * round_up8(vs_); }
  void set(uint32_t i, const void* v) {
    std::lock_guard<SpinLock> g(lock_);
    std::memcpy(at(i), v, vs_);
    present_[i].store(1, std::memory_order_release);
  }
  /// Returns whether the slot was present.
  bool clear(uint32_t i) {
    std::lock_guard<SpinLock> g(lock_);
    return present_[i].exchange(0, std::memory_order_acq_rel) != 0;
  }
  Map::Pool pool() { return {data_.data(), data_.size()}; }

 private:
  uint32_t n_, vs_;
  std::vector<uint8_t> data_;
  std::unique_ptr<std::atomic<uint8_t>[]> present_;
  SpinLock lock_;
};

/// Array get_next_key (array_map_get_next_key): absent/out of range -> 0, last -> -ENOENT.
inline long array_next_key(uint32_t max_entries, const void* key, void* next_key) {
  uint32_t i = UINT32_MAX, n;
  if (key) std::memcpy(&i, key, 4);
  if (i >= max_entries) {
    n = 0;
  } else if (i == max_entries - 1) {
    return -ENOENT;
  } else {
    n = i + 1;
  }
  std::memcpy(next_key, &n, 4);
  return 0;
}

inline uint32_t key_u32(const void* key) {
  uint32_t k;
  std::memcpy(&k, key, 4);
  return k;
}

}  // namespace knod::maps
