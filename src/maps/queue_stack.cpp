#include "maps/queue_stack.h"

#include <cstring>
#include <mutex>

namespace knod::maps {

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size != 0) bad_def(name, def, "key_size must be 0");
  if (def.value_size == 0) bad_def(name, def, "value_size 0");
  check_flags(name, def, BPF_F_NUMA_NODE | kAccessFlags);
  return def;
}
}  // namespace

QueueStackMap::QueueStackMap(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      stack_(def.type == BPF_MAP_TYPE_STACK),
      size_(def.max_entries + 1),
      slots_(size_t(size_) * def.value_size, 0) {}

long QueueStackMap::push(const void* value, uint64_t flags) {
  if (flags & ~uint64_t(BPF_EXIST)) return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  uint32_t vs = def().value_size;
  if ((head_ + 1) % size_ == tail_) {  // full
    if (!(flags & BPF_EXIST)) return -E2BIG;
    tail_ = (tail_ + 1) % size_;  // drop the oldest
  }
  std::memcpy(slots_.data() + size_t(head_) * vs, value, vs);
  head_ = (head_ + 1) % size_;
  return 0;
}

long QueueStackMap::take(void* value, bool remove) {
  std::lock_guard<SpinLock> g(lock_);
  uint32_t vs = def().value_size;
  if (head_ == tail_) {  // __queue_map_get / __stack_map_get: the value comes back zeroed
    std::memset(value, 0, vs);
    return -ENOENT;
  }
  uint32_t i = stack_ ? (head_ + size_ - 1) % size_ : tail_;
  std::memcpy(value, slots_.data() + size_t(i) * vs, vs);
  if (remove) {
    if (stack_)
      head_ = i;
    else
      tail_ = (tail_ + 1) % size_;
  }
  return 0;
}

}  // namespace knod::maps
