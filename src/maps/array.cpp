#include "maps/array.h"

#include <cstring>

#include "maps/spin_lock.h"
#include "maps/util.h"

namespace knod::maps {

namespace {
constexpr uint32_t kCacheLine = 64;  ///< bytes
constexpr uint32_t kArrayFlags =
    kAccessFlags | BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP;
}  // namespace

ArrayMap::ArrayMap(std::string name, MapDef def, uint32_t ncpus)
    : Map(std::move(name), def),
      percpu_(def.type == BPF_MAP_TYPE_PERCPU_ARRAY),
      ncpus_(percpu_ ? ncpus : 1),
      stride_(round_up8(def.value_size)) {
  // array_map_alloc_check()
  if (def.key_size != 4)
    bad_def(this->name(), def, "key_size " + std::to_string(def.key_size) + " must be 4");
  if (def.value_size == 0) bad_def(this->name(), def, "value_size 0");
  if (def.max_entries == 0) bad_def(this->name(), def, "max_entries 0");
  check_flags(this->name(), def, kArrayFlags);
  if (percpu_ && def.value_size > 32768)
    bad_def(this->name(), def, "per-CPU value_size over 32 KiB", "E2BIG");
  const uint64_t slots =
      uint64_t(def.max_entries) + (ncpus_ > 1 ? (kCacheLine + stride_ - 1) / stride_ : 0);
  if (uint64_t(stride_) * slots * ncpus_ > (uint64_t(1) << 32))
    bad_def(this->name(), def, "more than 4 GiB of values", "E2BIG");
  cpu_slots_ = uint32_t(slots);
  pool_.assign(size_t(stride_) * cpu_slots_ * ncpus_, 0);
}

uint8_t* ArrayMap::at(uint32_t index, uint32_t cpu) {
  if (index >= def().max_entries || cpu >= ncpus_) return nullptr;
  return pool_.data() + (size_t(cpu) * cpu_slots_ + index) * stride_;
}

void* ArrayMap::lookup(const void* key, uint32_t cpu) {
  uint32_t i;
  std::memcpy(&i, key, 4);
  return at(i, percpu_ ? cpu : 0);
}

long ArrayMap::check(const void* key, uint64_t flags, uint32_t* index) const {
  // array_map_update_elem()'s order of checks.
  if ((flags & ~uint64_t(BPF_F_LOCK)) > BPF_EXIST) return -EINVAL;
  std::memcpy(index, key, 4);
  if (*index >= def().max_entries) return -E2BIG;
  if (flags & BPF_NOEXIST) return -EEXIST;
  if ((flags & BPF_F_LOCK) && def().spin_lock_off < 0) return -EINVAL;
  return 0;
}

long ArrayMap::update(const void* key, const void* value, uint64_t flags, uint32_t cpu) {
  uint32_t i;
  if (long e = check(key, flags, &i)) return e;
  uint8_t* p = at(i, percpu_ ? cpu : 0);
  if (!p) return -EINVAL;
  if (flags & BPF_F_LOCK) return copy_value_locked(def(), p, value);
  copy_value(def(), p, value);
  return 0;
}

long ArrayMap::remove(const void*) {
  return -EINVAL;
}

uint32_t ArrayMap::user_value_size() const {
  return percpu_ ? ncpus_ * stride_ : def().value_size;
}

long ArrayMap::user_lookup(const void* key, void* value) {
  uint32_t i;
  std::memcpy(&i, key, 4);
  if (i >= def().max_entries) return -ENOENT;
  if (!percpu_) {
    std::memcpy(value, at(i), def().value_size);
  } else {
    for (uint32_t c = 0; c < ncpus_; ++c)  // value_size rounded up to 8 per CPU, as the kernel
      std::memcpy(static_cast<uint8_t*>(value) + size_t(c) * stride_, at(i, c), stride_);
  }
  return 0;
}

long ArrayMap::user_update(const void* key, const void* value, uint64_t flags) {
  if ((flags & BPF_F_LOCK) && def().spin_lock_off < 0) return -EINVAL;  // syscall.c, first
  uint32_t i;
  if (long e = check(key, flags, &i)) return e;
  if (!percpu_) {
    if (flags & BPF_F_LOCK) return copy_value_locked(def(), at(i), value);
    copy_value(def(), at(i), value);
  } else {
    // bpf_percpu_array_update() copies round_up(value_size, 8) per CPU, padding included.
    for (uint32_t c = 0; c < ncpus_; ++c)
      std::memcpy(at(i, c), static_cast<const uint8_t*>(value) + size_t(c) * stride_, stride_);
  }
  return 0;
}

long ArrayMap::get_next_key(const void* key, void* next_key) {
  uint32_t i = UINT32_MAX, n;
  if (key) std::memcpy(&i, key, 4);
  if (i >= def().max_entries) {
    n = 0;
  } else if (i == def().max_entries - 1) {
    return -ENOENT;
  } else {
    n = i + 1;
  }
  std::memcpy(next_key, &n, 4);
  return 0;
}

std::vector<Map::Pool> ArrayMap::value_pools() {
  return {{pool_.data(), pool_.size(), stride_, def().value_size}};
}

}  // namespace knod::maps
