// BPF_MAP_TYPE_LPM_TRIE (kernel/bpf/lpm_trie.c). Key: struct bpf_lpm_trie_key_u8
// { u32 prefixlen; u8 data[key_size - 4]; } with data in network order (bit 0 = MSB of data[0]).
// lookup: longest stored prefix matching the first key.prefixlen bits; update/delete: exact
// prefix. get_next_key follows the kernel's post-order walk: more specific prefixes before the
// prefixes that contain them, and at the first differing bit the 0 side first.
//
// Storage: the kernel's path-compressed binary trie over preallocated nodes. Nodes
// [0, max_entries) are the elements (slot i: key i, value i in one flat value pool);
// nodes [max_entries, 2 * max_entries) are intermediate nodes (no value; every one has exactly
// two children, so max_entries - 1 of them always suffice). lookup/update/delete walk at most
// prefixlen + 1 nodes. Concurrency: writers take a spinlock and bump a sequence counter;
// program lookups are lock-free readers that retry when a write overlapped (a seqlock).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "maps/util.h"

namespace knod::maps {

class LpmTrieMap : public Map {
 public:
  LpmTrieMap(std::string name, MapDef def);

  void* lookup(const void* key, uint32_t cpu) override;
  /// -EINVAL prefixlen > 8 * (key_size - 4) or bad flags, -EEXIST, -ENOENT, -ENOSPC when full.
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;

  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override {
    return update(key, value, flags, 0);
  }
  long get_next_key(const void* key, void* next_key) override;
  std::vector<Pool> value_pools() override {
    return {{values_.data(), values_.size(), stride_, def().value_size}};
  }

 private:
  /// Element slot of the longest stored prefix of `key`, or -1 (trie_lookup_elem()).
  int32_t longest_match(const uint8_t* key) const;
  /// Element slot whose prefix equals key's, or -1. Writers only (under lock_).
  int32_t exact(const uint8_t* key) const;
  /// Post-order comparison: true when slot a comes before slot b (both valid keys).
  bool before(const uint8_t* a, const uint8_t* b) const;
  const uint8_t* key_at(uint32_t i) const { return keys_.data() + size_t(i) * def().key_size; }
  /// Key bytes of node n (element key, or the intermediate node's copy).
  uint8_t* node_key(int32_t n) {
    return uint32_t(n) < def().max_entries
               ? keys_.data() + size_t(n) * def().key_size
               : im_keys_.data() + size_t(uint32_t(n) - def().max_entries) * def().key_size;
  }
  const uint8_t* node_key(int32_t n) const { return const_cast<LpmTrieMap*>(this)->node_key(n); }
  bool is_im(int32_t n) const { return uint32_t(n) >= def().max_entries; }
  std::atomic<int32_t>& child(int32_t n, int b) { return child_[size_t(n) * 2 + b]; }
  int32_t child(int32_t n, int b) const {
    return child_[size_t(n) * 2 + b].load(std::memory_order_relaxed);
  }
  uint32_t nplen(int32_t n) const { return plen_[n].load(std::memory_order_relaxed); }
  void set_node(int32_t n, uint32_t prefixlen, int32_t c0, int32_t c1);

  uint32_t max_prefixlen_, stride_;
  std::vector<uint8_t> keys_, values_, im_keys_;
  std::unique_ptr<std::atomic<int32_t>[]> child_;  ///< 2 per node, -1 = none
  std::unique_ptr<std::atomic<uint32_t>[]> plen_;  ///< prefixlen per node
  std::atomic<int32_t> root_{-1};
  std::vector<int32_t> free_slots_, free_im_;  ///< stacks, under lock_
  std::vector<uint8_t> used_;
  uint32_t n_ = 0;
  SpinLock lock_;
  std::atomic<uint64_t> seq_{0};  ///< odd while a writer changes the trie
};

}  // namespace knod::maps
