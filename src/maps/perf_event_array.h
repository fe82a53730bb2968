// BPF_MAP_TYPE_PERF_EVENT_ARRAY (kernel/trace/bpf_trace.c bpf_perf_event_output): one output
// channel per slot (normally per CPU). knod is the reader of every slot, so output works on
// every index < max_entries without installing perf-event fds; user_update stores the value
// (the kernel's fd) and has no other effect. Each slot has a preallocated record buffer of
// `slot_bytes`; a record that does not fit is lost (counted) and output returns -ENOSPC, as
// the kernel does when the perf ring is full. drain() hands the records out and empties it.
#pragma once

#include <functional>
#include <memory>

#include "maps/slot_array.h"

namespace knod::maps {

class PerfEventArray : public Map {
 public:
  static constexpr uint32_t kDefaultSlotBytes = 256 * 1024;
  PerfEventArray(std::string name, MapDef def, uint32_t slot_bytes = kDefaultSlotBytes);

  /// bpf_perf_event_output: `flags` & BPF_F_INDEX_MASK is the slot (BPF_F_CURRENT_CPU -> cpu);
  /// the record is data[0..size) followed by extra[0..extra_size) (the XDP helper passes the
  /// packet bytes selected by BPF_F_CTXLEN_MASK as `extra`). Returns 0, -EINVAL (unknown flag
  /// bits), -E2BIG (slot >= max_entries), -ENOSPC (buffer full; counted in lost()).
  /// Never allocates or throws.
  long output(uint64_t flags, uint32_t cpu, const void* data, uint64_t size,
              const void* extra = nullptr, uint64_t extra_size = 0);

  /// Calls fn(slot, bytes, size) for every record in slot order, then in output order, and
  /// empties the buffers. Returns the number of records.
  size_t drain(const std::function<void(uint32_t slot, const uint8_t* data, uint32_t size)>& fn);
  uint64_t lost() const { return lost_.load(); }

  void* lookup(const void*, uint32_t) override { return nullptr; }
  long update(const void*, const void*, uint64_t, uint32_t) override { return -EOPNOTSUPP; }
  long remove(const void* key) override;
  long user_lookup(const void*, void*) override { return -kENOTSUPP; }
  long user_update(const void* key, const void* value, uint64_t flags) override;
  long get_next_key(const void* key, void* next_key) override {
    return array_next_key(def().max_entries, key, next_key);
  }
  std::vector<Pool> value_pools() override { return {}; }

 private:
  struct Slot {
    SpinLock lock;
    uint32_t used = 0;
  };
  uint32_t slot_bytes_;
  std::vector<uint8_t> buf_;  // max_entries * slot_bytes_
  std::unique_ptr<Slot[]> slots_;
  SlotArray fds_;
  std::atomic<uint64_t> lost_{0};
};

}  // namespace knod::maps
