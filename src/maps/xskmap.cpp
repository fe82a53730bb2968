#include "maps/xskmap.h"

namespace knod::maps {

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size != 4) bad_def(name, def, "key_size must be 4");
  if (def.value_size != 4) bad_def(name, def, "value_size must be 4");
  check_flags(name, def, BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY);
  return def;
}
}  // namespace

XskMap::XskMap(std::string name, MapDef def)
    : Map(name, checked(name, def)), slots_(def.max_entries, 4) {}

int64_t XskMap::get(uint32_t key) const {
  if (key >= def().max_entries || !slots_.present(key)) return -1;
  return key_u32(slots_.at(key));
}

void* XskMap::lookup(const void* key, uint32_t) {
  uint32_t k = key_u32(key);
  if (k >= def().max_entries || !slots_.present(k)) return nullptr;
  return slots_.at(k);
}

long XskMap::update(const void* key, const void* value, uint64_t flags, uint32_t) {
  uint32_t k = key_u32(key);
  if (flags > BPF_EXIST) return -EINVAL;
  if (k >= def().max_entries) return -E2BIG;
  bool present = slots_.present(k);
  if (present && flags == BPF_NOEXIST) return -EEXIST;
  if (!present && flags == BPF_EXIST) return -ENOENT;
  slots_.set(k, value);
  return 0;
}

long XskMap::remove(const void* key) {
  uint32_t k = key_u32(key);
  if (k >= def().max_entries) return -EINVAL;
  slots_.clear(k);
  return 0;
}

}  // namespace knod::maps
