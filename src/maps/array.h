// BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY (kernel/bpf/arraymap.c).
// Storage: one flat, zero-initialised pool of ncpus * cpu_slots * round_up(value_size, 8)
// bytes; element i of CPU c is at (c * cpu_slots + i) * stride. Each CPU's values are
// contiguous, as the kernel's per-CPU areas, and a per-CPU map leaves at least 64 bytes
// (a cache line) of unused slots after each CPU's max_entries values, so that workers
// counting into a small map never write the same cache line. Nothing is ever freed.
#pragma once

#include <vector>

#include "maps/map.h"

namespace knod::maps {

class ArrayMap : public Map {
 public:
  /// Throws knod::Error for key_size != 4, value_size 0, max_entries 0, bad flags.
  ArrayMap(std::string name, MapDef def, uint32_t ncpus);

  void* lookup(const void* key, uint32_t cpu) override;
  /// -E2BIG index >= max_entries, -EEXIST for BPF_NOEXIST (every index exists), -EINVAL flags.
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;  ///< always -EINVAL (array elements cannot go)

  uint32_t user_value_size() const override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override;
  /// key nullptr or out of range -> 0; last index -> -ENOENT; else index + 1.
  long get_next_key(const void* key, void* next_key) override;
  std::vector<Pool> value_pools() override;

  /// Value of element `index` for `cpu` (nullptr when out of range); for loaders' init data.
  uint8_t* at(uint32_t index, uint32_t cpu = 0);
  /// Storage layout, for executors that inline lookups and GPU map images: element i of CPU
  /// c is at values() + (c * cpu_slots() + i) * stride() bytes.
  uint8_t* values() { return pool_.data(); }
  uint32_t ncpus() const { return ncpus_; }
  uint32_t stride() const { return stride_; }
  /// Slots per CPU: max_entries, plus the cache-line gap of a per-CPU map on several CPUs.
  uint32_t cpu_slots() const { return cpu_slots_; }

 private:
  long check(const void* key, uint64_t flags, uint32_t* index) const;
  bool percpu_;
  uint32_t ncpus_, stride_, cpu_slots_ = 0;
  std::vector<uint8_t> pool_;
};

}  // namespace knod::maps
