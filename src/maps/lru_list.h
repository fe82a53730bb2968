// The eviction order of LRU_HASH / LRU_PERCPU_HASH maps, shaped like the kernel's common LRU
// (kernel/bpf/bpf_lru_list.c): an active and an inactive list of element indexes, and a
// reference byte per element that lookups set (bpf_lru_node_set_ref; maps/hash.h owns the
// bytes, the JIT's inlined lookups write them too).
//
// New elements enter at the inactive head. To free one (victim()):
//  1. when the inactive list is shorter than the active one, up to kScan nodes at the active
//     tail rotate: referenced ones go back to the active head with the byte cleared, the
//     others are demoted to the inactive head (__bpf_lru_list_rotate_active);
//  2. up to kScan nodes at the inactive tail are scanned: a referenced one is promoted to the
//     active head (byte cleared), the first unreferenced one is the victim
//     (__bpf_lru_list_shrink_inactive);
//  3. if none was found, the oldest node step 2 promoted (the inactive tail it started from)
//     is the victim anyway, or the active tail when the inactive list was empty
//     (__bpf_lru_list_shrink's forced shrink, which takes the tail of the inactive list, else
//     of the active one: the kernel's pending and rotation lists keep a key looked up on
//     every packet out of that position, knod keeps it out by never forcing an active one).
// So an element looked up between evictions stays in the active list: a hot key survives any
// number of cold inserts. What the kernel has beyond this (per-CPU free and pending lists,
// batch moves of LOCAL_FREE_TARGET nodes) changes *which* cold key goes, not that one does.
// Not thread-safe: the map calls it under its map-wide lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace knod::maps {

class LruLists {
 public:
  static constexpr uint32_t kNil = UINT32_MAX;
  static constexpr uint32_t kScan = 128;  ///< nodes looked at per step (the kernel's nr_scans)

  /// Elements 0..elements-1, none in a list.
  explicit LruLists(uint32_t elements);

  /// A new element (not in a list): the inactive head.
  void add(uint32_t e);
  /// Takes e out of its list (no-op when in none).
  void remove(uint32_t e);
  /// Picks, unlinks and returns the element to evict (see above); kNil when both lists are
  /// empty. `ref`: the reference bytes, indexed by element.
  uint32_t victim(std::atomic<uint8_t>* ref);

  uint32_t active() const { return active_.count; }
  uint32_t inactive() const { return inactive_.count; }
  bool is_active(uint32_t e) const { return where_[e] == kActive; }

 private:
  enum : uint8_t { kNone = 0, kInactive = 1, kActive = 2 };
  struct List {
    uint32_t head = kNil, tail = kNil, count = 0;
  };
  List& list(uint8_t w) { return w == kActive ? active_ : inactive_; }
  void push_head(uint8_t w, uint32_t e);
  void rotate_active(std::atomic<uint8_t>* ref);
  std::vector<uint32_t> prev_, next_;
  std::vector<uint8_t> where_;
  List active_, inactive_;
};

}  // namespace knod::maps
