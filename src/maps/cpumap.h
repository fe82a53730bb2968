// BPF_MAP_TYPE_CPUMAP (kernel/bpf/cpumap.c): slot i = CPU i's redirect queue.
// Value: u32 qsize (value_size 4) or struct bpf_cpumap_val (value_size 8). Update: flags >
// BPF_EXIST -> -EINVAL, key >= max_entries -> -E2BIG, BPF_NOEXIST -> -EEXIST, qsize > 16384
// -> -EOVERFLOW, key >= ncpus -> -ENODEV, qsize 0 clears the slot; a cpumap program
// (bpf_prog.fd > 0) is refused with -EOPNOTSUPP (knod runs none). Delete: -EINVAL past
// max_entries, else 0. Programs cannot look it up (only bpf_redirect_map, through get()).
#pragma once

#include "maps/slot_array.h"

namespace knod::maps {

class CpuMap : public Map {
 public:
  CpuMap(std::string name, MapDef def, uint32_t ncpus);

  /// For bpf_redirect_map: CPU `key`'s entry, or nullptr.
  const bpf_cpumap_val* get(uint32_t key);

  void* lookup(const void*, uint32_t) override { return nullptr; }
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override {
    return update(key, value, flags, 0);
  }
  long get_next_key(const void* key, void* next_key) override {
    return array_next_key(def().max_entries, key, next_key);
  }
  std::vector<Pool> value_pools() override { return {}; }

 private:
  uint32_t ncpus_;
  SlotArray slots_;
};

}  // namespace knod::maps
