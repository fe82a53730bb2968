// BPF_MAP_TYPE_QUEUE (FIFO) and BPF_MAP_TYPE_STACK (LIFO) (kernel/bpf/queue_stack_maps.c).
// key_size must be 0. push with BPF_EXIST overwrites the oldest element when full, else
// -E2BIG; pop/peek on empty -ENOENT. User side: update = push, lookup = peek,
// user_pop (BPF_MAP_LOOKUP_AND_DELETE_ELEM) = pop; get_next_key and delete are -EINVAL.
// Storage: a ring of max_entries + 1 preallocated slots, one spinlock (as the kernel).
#pragma once

#include <vector>

#include "maps/util.h"

namespace knod::maps {

class QueueStackMap : public Map {
 public:
  QueueStackMap(std::string name, MapDef def);

  void* lookup(const void*, uint32_t) override { return nullptr; }
  long update(const void*, const void* value, uint64_t flags, uint32_t) override {
    return push(value, flags);
  }
  long remove(const void*) override { return -EINVAL; }
  long push(const void* value, uint64_t flags) override;
  long pop(void* value) override { return take(value, true); }
  long peek(void* value) override { return take(value, false); }

  long user_lookup(const void*, void* value) override { return peek(value); }
  long user_update(const void*, const void* value, uint64_t flags) override {
    return push(value, flags);
  }
  long user_delete(const void*) override { return -EINVAL; }
  long get_next_key(const void*, void*) override { return -EINVAL; }
  long user_pop(void* value) { return pop(value); }
  std::vector<Pool> value_pools() override { return {{slots_.data(), slots_.size()}}; }

 private:
  long take(void* value, bool remove);
  bool stack_;
  uint32_t size_;  // max_entries + 1 slots
  uint32_t head_ = 0, tail_ = 0;
  std::vector<uint8_t> slots_;
  SpinLock lock_;
};

}  // namespace knod::maps
