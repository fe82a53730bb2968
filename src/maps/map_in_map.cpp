#include "maps/map_in_map.h"

#include <cstring>
#include <mutex>

#include "maps/jhash.h"
#include "maps/slot_array.h"

namespace knod::maps {

namespace {
uint32_t hash_fn(const void* key, uint32_t key_size) {
  return htab_hash(key, key_size, 0);
}

const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.value_size != 4) bad_def(name, def, "value_size must be 4 (a map id)");
  if (def.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
    if (def.key_size != 4) bad_def(name, def, "key_size must be 4");
    check_flags(name, def, BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY);
  } else {
    if (def.key_size == 0) bad_def(name, def, "key_size 0");
    if (def.key_size > 512) bad_def(name, def, "key_size over 512 bytes", "E2BIG");
    check_flags(
        name, def,
        BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_ZERO_SEED);
  }
  return def;
}
bool is_hash(const MapDef& d) {
  return d.type == BPF_MAP_TYPE_HASH_OF_MAPS;
}
}  // namespace

MapOfMaps::MapOfMaps(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      hash_(is_hash(def)),
      table_(def.key_size, sizeof(Entry), hash_ ? def.max_entries : 1, hash_fn),
      slots_(hash_ ? 0 : def.max_entries, Entry{nullptr, 0}),
      present_(new std::atomic<uint8_t>[hash_ ? 1 : def.max_entries]()) {}

void MapOfMaps::set_inner(const MapDef& inner_template, Resolver resolve) {
  inner_ = inner_template;
  resolve_ = std::move(resolve);
}

void* MapOfMaps::lookup(const void* key, uint32_t) {
  if (!hash_) {
    uint32_t k = key_u32(key);
    if (k >= def().max_entries || !present_[k].load(std::memory_order_acquire)) return nullptr;
    return slots_[k].map;
  }
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  std::lock_guard<SpinLock> g(table_.lock(b));
  uint32_t e = table_.find(h, key);
  if (e == HashTable::kNil) return nullptr;
  Entry en;
  std::memcpy(&en, table_.value_at(e), sizeof en);
  return en.map;
}

long MapOfMaps::user_update(const void* key, const void* value, uint64_t flags) {
  if (!resolve_) return -EINVAL;
  if (!hash_ && flags != BPF_ANY) return -EINVAL;
  if (hash_ && flags > BPF_EXIST) return -EINVAL;
  uint32_t id = key_u32(value);
  MapPtr m = resolve_(id);
  if (!m) return -EBADF;
  const MapDef& d = m->def();
  if (d.type != inner_.type || d.key_size != inner_.key_size || d.value_size != inner_.value_size ||
      (d.map_flags & ~BPF_F_INNER_MAP) != (inner_.map_flags & ~BPF_F_INNER_MAP) ||
      (!(inner_.map_flags & BPF_F_INNER_MAP) && d.max_entries != inner_.max_entries))
    return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  Entry en{m.get(), id};
  if (!hash_) {
    uint32_t k = key_u32(key);
    if (k >= def().max_entries) return -E2BIG;
    held_.push_back(std::move(m));
    slots_[k] = en;
    present_[k].store(1, std::memory_order_release);
    return 0;
  }
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  std::lock_guard<SpinLock> gb(table_.lock(b));
  uint32_t e = table_.find(h, key);
  if (e != HashTable::kNil && flags == BPF_NOEXIST) return -EEXIST;
  if (e == HashTable::kNil && flags == BPF_EXIST) return -ENOENT;
  if (e != HashTable::kNil) {
    table_.unlink(b, e);
  } else {
    if ((e = table_.alloc()) == HashTable::kNil) return -E2BIG;
    std::memcpy(table_.key_at(e), key, def().key_size);
  }
  std::memcpy(table_.value_at(e), &en, sizeof en);
  table_.link_head(b, e, h);
  held_.push_back(std::move(m));
  return 0;
}

long MapOfMaps::user_lookup(const void* key, void* value) {
  Entry en{};
  if (!hash_) {
    uint32_t k = key_u32(key);
    if (k >= def().max_entries || !present_[k].load(std::memory_order_acquire)) return -ENOENT;
    en = slots_[k];
  } else {
    uint32_t h = table_.hash(key), b = table_.bucket(h);
    std::lock_guard<SpinLock> g(table_.lock(b));
    uint32_t e = table_.find(h, key);
    if (e == HashTable::kNil) return -ENOENT;
    std::memcpy(&en, table_.value_at(e), sizeof en);
  }
  std::memcpy(value, &en.id, 4);
  return 0;
}

long MapOfMaps::remove(const void* key) {
  if (!hash_) {
    uint32_t k = key_u32(key);
    if (k >= def().max_entries) return -E2BIG;
    return present_[k].exchange(0) ? 0 : -ENOENT;
  }
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  table_.lock(b).lock();
  uint32_t e = table_.find(h, key);
  if (e != HashTable::kNil) table_.unlink(b, e);
  table_.lock(b).unlock();
  if (e == HashTable::kNil) return -ENOENT;
  table_.release(e);
  return 0;
}

long MapOfMaps::get_next_key(const void* key, void* next_key) {
  if (!hash_) return array_next_key(def().max_entries, key, next_key);
  return table_.get_next_key(key, next_key);
}

}  // namespace knod::maps
