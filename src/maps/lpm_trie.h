// BPF_MAP_TYPE_LPM_TRIE (kernel/bpf/lpm_trie.c). Key: struct bpf_lpm_trie_key_u8
// { u32 prefixlen; u8 data[key_size - 4]; } with data in network order (bit 0 = MSB of data[0]).
// lookup: longest stored prefix matching the first key.prefixlen bits; update/delete: exact
// prefix. get_next_key follows the kernel's post-order walk: more specific prefixes before the
// prefixes that contain them, and at the first differing bit the 0 side first.
//
// Storage: max_entries preallocated slots (keys, values in one flat pool). Lookups scan every
// used slot (O(n), fine for the rule-table sizes XDP programs use; a path-compressed trie
// would be the next step). One map-wide spinlock guards it.
#pragma once

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
  std::vector<Pool> value_pools() override { return {{values_.data(), values_.size()}}; }

 private:
  int32_t longest_match(const uint8_t* key) const;
  int32_t exact(const uint8_t* key) const;
  /// Post-order comparison: true when slot a comes before slot b (both valid keys).
  bool before(const uint8_t* a, const uint8_t* b) const;
  const uint8_t* key_at(uint32_t i) const { return keys_.data() + size_t(i) * def().key_size; }

  uint32_t max_prefixlen_, stride_;
  std::vector<uint8_t> keys_, values_;
  std::vector<uint8_t> used_;
  uint32_t n_ = 0;
  SpinLock lock_;
};

}  // namespace knod::maps
