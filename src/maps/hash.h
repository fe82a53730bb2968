// BPF_MAP_TYPE_HASH, PERCPU_HASH, LRU_HASH, LRU_PERCPU_HASH (kernel/bpf/hashtab.c).
//
// Preallocated always (BPF_F_NO_PREALLOC is accepted and ignored, as the data path must not
// allocate). Hashing is the kernel's jhash with seed 0, so with BPF_F_ZERO_SEED the
// get_next_key order equals the kernel's; without it the kernel's order is random anyway.
// Replacing a HASH/LRU_HASH element moves it to the head of its bucket (the kernel links a
// new element at the head); PERCPU variants update in place (as the kernel does).
//
// LRU: when all max_entries are in use, an update evicts instead of failing, in the order of
// the kernel's common LRU (htab_lru_map_update_elem takes its node before it looks at the key
// or the flags, so a replacing or failing update evicts too; the per-CPU LRU map not for
// BPF_EXIST): active and inactive lists and a reference byte set by
// lookups (maps/lru_list.h). The kernel also keeps per-CPU free and pending lists and moves
// nodes in batches, so *which* cold key is evicted can differ; what holds in both: the map
// never exceeds max_entries, the inserted key is present, and a key looked up between
// evictions survives any number of cold inserts. NO_COMMON_LRU is accepted and
// treated as a common LRU.
//
// Per-CPU maps store values CPU-major, as the kernel's per-CPU allocations do: CPU c's value
// of element e at values + (c * elements + e) * stride, so CPUs updating one key's values
// write different cache lines (element-major, a key's 8-byte counters of 8 CPUs would share
// one line). Concurrency: lookups take no lock (HashTable::find); updates
// and deletes take bucket spinlocks, LRU maps additionally one
// map-wide spinlock per operation (eviction touches several buckets).
#pragma once

#include <atomic>
#include <memory>

#include "maps/hash_table.h"
#include "maps/lru_list.h"

namespace knod::maps {

class HashMap : public Map {
 public:
  HashMap(std::string name, MapDef def, uint32_t ncpus);

  void* lookup(const void* key, uint32_t cpu) override;
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;

  uint32_t user_value_size() const override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override;
  long get_next_key(const void* key, void* next_key) override;
  std::vector<Pool> value_pools() override {
    Pool p = table_.pool();  // per-CPU elements: ncpus values of stride_ bytes each
    p.stride = stride_;
    p.value_size = def().value_size;
    return {p};
  }

  uint32_t count() const { return table_.count(); }

  // What a lookup compiled elsewhere needs (jit/map_desc.cpp, jit/runtime/rt.cpp), equal to
  // lookup(): find the element e (maps/hash_view.h); LRU maps then set lru_ref()[e] if clear;
  // the value is at view().values + e * view().value_bytes, for per-CPU maps (cpu <
  // ncpus(), else NULL) plus cpu * cpu_block() bytes.
  HashView view() {
    HashView v = table_.view();
    if (percpu_) v.value_bytes = stride_;  // CPU 0's values; the others cpu_block() apart
    return v;
  }
  bool percpu() const { return percpu_; }
  uint32_t ncpus() const { return ncpus_; }
  uint32_t stride() const { return stride_; }
  /// Per-CPU maps: bytes from one CPU's values to the next (elements * stride()).
  uint64_t cpu_block() const { return cpu_block_; }
  /// LRU maps: one reference byte per element (0 or 1); nullptr for the others.
  uint8_t* lru_ref() { return lru_ ? reinterpret_cast<uint8_t*>(ref_.get()) : nullptr; }

 private:
  /// cpu == kAllCpus: value holds ncpus slots of round_up(value_size, 8) (user side).
  static constexpr uint32_t kAllCpus = UINT32_MAX;
  long do_update(const void* key, const void* value, uint64_t flags, uint32_t cpu);
  void store(uint32_t e, const void* value, uint32_t cpu, bool fresh);
  uint32_t evict();  // LRU: frees one element, returns it (allocated); kNil if none
  /// Per-CPU maps: CPU `cpu`'s value of element `e`.
  uint8_t* slot(uint32_t e, uint32_t cpu) {
    return table_.value_at(0) + cpu * cpu_block_ + uint64_t(e) * stride_;
  }

  bool percpu_, lru_;
  uint32_t ncpus_, stride_;
  HashTable table_;
  uint64_t cpu_block_ = 0;  // per-CPU maps: elements * stride_
  SpinLock map_lock_;       // LRU maps only
  LruLists lru_list_;       // LRU maps only (empty otherwise); guarded by map_lock_
  std::unique_ptr<std::atomic<uint8_t>[]> ref_;
};

}  // namespace knod::maps
