// BPF_MAP_TYPE_DEVMAP and BPF_MAP_TYPE_DEVMAP_HASH (kernel/bpf/devmap.c): redirect targets.
// Value: u32 ifindex (value_size 4) or struct bpf_devmap_val (value_size 8). Programs may look
// entries up (read-only, the kernel sets BPF_F_RDONLY_PROG) and bpf_redirect_map uses get().
// Differences from the kernel: the ifindex is not checked against this host's interfaces
// (the kernel answers -EINVAL for an unknown one), and a devmap program (bpf_prog.fd > 0)
// is refused with -EOPNOTSUPP.
// DEVMAP: update -E2BIG past max_entries, BPF_NOEXIST -> -EEXIST, ifindex 0 clears the slot;
// delete -EINVAL past max_entries, else 0. DEVMAP_HASH: bucket = key & (n_buckets - 1),
// -E2BIG when full, ifindex 0 -> -EINVAL, delete of an absent key -ENOENT.
#pragma once

#include "maps/hash_table.h"
#include "maps/slot_array.h"

namespace knod::maps {

class DevMap : public Map {
 public:
  DevMap(std::string name, MapDef def);

  /// For bpf_redirect_map: the entry for `key` (bpf_prog.id is 0), or nullptr.
  const bpf_devmap_val* get(uint32_t key);

  void* lookup(const void* key, uint32_t cpu) override;
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override {
    return update(key, value, flags, 0);
  }
  long get_next_key(const void* key, void* next_key) override;
  std::vector<Pool> value_pools() override;
  bool prog_readonly() const override { return true; }

 private:
  bool hash_;
  SlotArray slots_;  // DEVMAP
  HashTable table_;  // DEVMAP_HASH
};

}  // namespace knod::maps
