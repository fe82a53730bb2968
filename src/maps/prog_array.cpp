#include "maps/prog_array.h"

namespace knod::maps {

void check_fd_array(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size != 4) bad_def(name, def, "key_size must be 4");
  if (def.value_size != 4) bad_def(name, def, "value_size must be 4");
  if (def.map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG))
    bad_def(name, def, "BPF_F_RDONLY_PROG/BPF_F_WRONLY_PROG on an fd array");
  check_flags(name, def, kAccessFlags | BPF_F_NUMA_NODE | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP);
}

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  check_fd_array(name, def);
  return def;
}
}  // namespace

ProgArray::ProgArray(std::string name, MapDef def)
    : Map(name, checked(name, def)), slots_(new std::atomic<int64_t>[def.max_entries]) {
  for (uint32_t i = 0; i < def.max_entries; ++i) slots_[i].store(-1);
}

int64_t ProgArray::get(uint32_t index) const {
  if (index >= def().max_entries) return -1;
  return slots_[index].load(std::memory_order_acquire);
}

long ProgArray::remove(const void* key) {
  uint32_t i = key_u32(key);
  if (i >= def().max_entries) return -E2BIG;
  return slots_[i].exchange(-1) < 0 ? -ENOENT : 0;
}

long ProgArray::user_lookup(const void* key, void* value) {
  uint32_t i = key_u32(key);
  int64_t v = get(i);
  if (v < 0) return -ENOENT;
  uint32_t u = uint32_t(v);
  std::memcpy(value, &u, 4);
  return 0;
}

long ProgArray::user_update(const void* key, const void* value, uint64_t flags) {
  if (flags != BPF_ANY) return -EINVAL;
  uint32_t i = key_u32(key);
  if (i >= def().max_entries) return -E2BIG;
  slots_[i].store(key_u32(value), std::memory_order_release);
  return 0;
}

}  // namespace knod::maps
