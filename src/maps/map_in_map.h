// BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS (kernel/bpf/map_in_map.c,
// arraymap.c, hashtab.c). Values are maps. The user-side value is a u32 map id, which the
// resolver set with set_inner() turns into a map (the loader uses the index in
// Object::maps; the kernel takes a map fd and reports the map id on lookup). An inner map must
// match the inner template (type, key_size, value_size, map_flags; max_entries too unless the
// template has BPF_F_INNER_MAP), else -EINVAL; an unknown id is -EBADF.
// Program-side lookup returns the inner `maps::Map*` itself (not a pointer to a value), as the
// kernel returns the inner struct bpf_map*: helpers then take it as their map argument.
// ARRAY_OF_MAPS: update flags other than BPF_ANY -> -EINVAL, -E2BIG past max_entries, delete
// -ENOENT on an empty slot. HASH_OF_MAPS: the hash map's flag rules and iteration order.
#pragma once

#include <functional>

#include "maps/hash_table.h"

namespace knod::maps {

class MapOfMaps : public Map {
 public:
  using Resolver = std::function<MapPtr(uint32_t id)>;
  MapOfMaps(std::string name, MapDef def);

  /// Inner template and id resolver; until set, every update is -EINVAL.
  void set_inner(const MapDef& inner_template, Resolver resolve);
  const MapDef& inner_template() const { return inner_; }

  /// The inner map stored under `key`, or nullptr.
  Map* inner(const void* key) { return static_cast<Map*>(lookup(key, 0)); }

  void* lookup(const void* key, uint32_t cpu) override;
  long update(const void*, const void*, uint64_t, uint32_t) override { return -EOPNOTSUPP; }
  long remove(const void* key) override;
  long user_lookup(const void* key, void* value) override;
  long user_update(const void* key, const void* value, uint64_t flags) override;
  long get_next_key(const void* key, void* next_key) override;
  std::vector<Pool> value_pools() override { return {}; }

 private:
  struct Entry {
    Map* map;
    uint32_t id;
  };
  bool hash_;
  MapDef inner_{};
  Resolver resolve_;
  std::vector<MapPtr> held_;  // keeps every inner map ever stored alive
  HashTable table_;           // HASH_OF_MAPS: key -> Entry
  std::vector<Entry> slots_;  // ARRAY_OF_MAPS
  std::unique_ptr<std::atomic<uint8_t>[]> present_;
  SpinLock lock_;
};

}  // namespace knod::maps
