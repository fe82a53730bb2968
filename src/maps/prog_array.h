// BPF_MAP_TYPE_PROG_ARRAY (kernel/bpf/arraymap.c, fd array): slot i holds a program. In knod a
// value is a program index (vm::Env::programs) where the kernel takes a program fd.
// User update: flags other than BPF_ANY -> -EINVAL, index >= max_entries -> -E2BIG.
// Delete: -E2BIG out of range, -ENOENT empty. Programs cannot look it up (only bpf_tail_call).
#pragma once

#include "maps/slot_array.h"

namespace knod::maps {

class ProgArray : public Map {
 public:
  ProgArray(std::string name, MapDef def);

  /// For bpf_tail_call: program index in slot `index`, or -1 (empty or out of range).
  int64_t get(uint32_t index) const;

  void* lookup(const void*, uint32_t) override { return nullptr; }
  long update(const void*, const void*, uint64_t, uint32_t) override { return -EOPNOTSUPP; }
  long remove(const void* key) override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override;
  long get_next_key(const void* key, void* next_key) override {
    return array_next_key(def().max_entries, key, next_key);
  }
  std::vector<Pool> value_pools() override { return {}; }

 private:
  std::unique_ptr<std::atomic<int64_t>[]> slots_;
};

/// fd_array_map_alloc_check(): key_size 4, value_size 4, no *_PROG access flags.
void check_fd_array(const std::string& name, const MapDef& def);

}  // namespace knod::maps
