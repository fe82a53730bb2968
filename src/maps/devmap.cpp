#include "maps/devmap.h"

namespace knod::maps {

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size != 4) bad_def(name, def, "key_size must be 4");
  if (def.value_size != 4 && def.value_size != 8)
    bad_def(name, def, "value_size must be 4 (ifindex) or 8 (struct bpf_devmap_val)");
  check_flags(name, def, BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY);
  return def;
}
uint32_t key_hash(const void* key, uint32_t) {
  return key_u32(key);
}
bool is_hash(const MapDef& d) {
  return d.type == BPF_MAP_TYPE_DEVMAP_HASH;
}
}  // namespace

DevMap::DevMap(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      hash_(is_hash(def)),
      slots_(hash_ ? 0 : def.max_entries, sizeof(bpf_devmap_val)),
      table_(4, sizeof(bpf_devmap_val), hash_ ? def.max_entries : 1, key_hash) {}

const bpf_devmap_val* DevMap::get(uint32_t key) {
  return static_cast<const bpf_devmap_val*>(lookup(&key, 0));
}

void* DevMap::lookup(const void* key, uint32_t) {
  uint32_t k = key_u32(key);
  if (!hash_) {
    if (k >= def().max_entries || !slots_.present(k)) return nullptr;
    return slots_.at(k);
  }
  uint32_t b = table_.bucket(k);
  std::lock_guard<SpinLock> g(table_.lock(b));
  uint32_t e = table_.find(k, key);
  return e == HashTable::kNil ? nullptr : table_.value_at(e);
}

long DevMap::update(const void* key, const void* value, uint64_t flags, uint32_t) {
  bpf_devmap_val v{};
  std::memcpy(&v, value, def().value_size);
  if (flags > BPF_EXIST) return -EINVAL;
  uint32_t k = key_u32(key);
  if (!hash_) {
    if (k >= def().max_entries) return -E2BIG;
    if (flags == BPF_NOEXIST) return -EEXIST;
    if (!v.ifindex) {
      if (v.bpf_prog.fd > 0) return -EINVAL;
      slots_.clear(k);
      return 0;
    }
    if (v.bpf_prog.fd > 0) return -EOPNOTSUPP;
    v.bpf_prog.id = 0;
    slots_.set(k, &v);
    return 0;
  }
  if (!v.ifindex) return -EINVAL;
  if (v.bpf_prog.fd > 0) return -EOPNOTSUPP;
  v.bpf_prog.id = 0;
  uint32_t b = table_.bucket(k);
  std::lock_guard<SpinLock> g(table_.lock(b));
  uint32_t e = table_.find(k, key);
  if (e != HashTable::kNil) {
    if (flags & BPF_NOEXIST) return -EEXIST;
    table_.unlink(b, e);
  } else {
    if (table_.count() >= def().max_entries || (e = table_.alloc()) == HashTable::kNil)
      return -E2BIG;
    std::memcpy(table_.key_at(e), &k, 4);
  }
  std::memcpy(table_.value_at(e), &v, sizeof v);
  table_.link_head(b, e, k);
  return 0;
}

long DevMap::remove(const void* key) {
  uint32_t k = key_u32(key);
  if (!hash_) {
    if (k >= def().max_entries) return -EINVAL;
    slots_.clear(k);
    return 0;
  }
  uint32_t b = table_.bucket(k);
  table_.lock(b).lock();
  uint32_t e = table_.find(k, key);
  if (e != HashTable::kNil) table_.unlink(b, e);
  table_.lock(b).unlock();
  if (e == HashTable::kNil) return -ENOENT;
  table_.release(e);
  return 0;
}

long DevMap::user_lookup(const void* key, void* value) {
  void* p = lookup(key, 0);
  if (!p) return -ENOENT;
  std::memcpy(value, p, def().value_size);
  return 0;
}

long DevMap::get_next_key(const void* key, void* next_key) {
  if (!hash_) return array_next_key(def().max_entries, key, next_key);
  return table_.get_next_key(key, next_key);
}

std::vector<Map::Pool> DevMap::value_pools() {
  Pool p = hash_ ? table_.pool() : slots_.pool();
  p.stride = round_up8(sizeof(bpf_devmap_val));  // slot and table element size
  p.value_size = def().value_size;
  return {p};
}

}  // namespace knod::maps
