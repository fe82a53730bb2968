// BPF_MAP_TYPE_XSKMAP (net/xdp/xskmap.c): slot i = the AF_XDP socket of queue i. In knod a
// value is an opaque socket handle chosen by the packet I/O layer (the kernel takes a socket
// fd). Update: flags > BPF_EXIST -> -EINVAL, key >= max_entries -> -E2BIG, -EEXIST/-ENOENT per
// flags. Delete: -EINVAL past max_entries, else 0. User lookup: -EOPNOTSUPP (as the kernel).
// Programs may look up (read-only, non-null when a socket is set) and redirect via get().
#pragma once

#include "maps/slot_array.h"

namespace knod::maps {

class XskMap : public Map {
 public:
  XskMap(std::string name, MapDef def);

  /// Socket handle in slot `key`, or -1.
  int64_t get(uint32_t key) const;

  void* lookup(const void* key, uint32_t cpu) override;
  long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) override;
  long remove(const void* key) override;
  long user_lookup(const void*, void*) override { return -EOPNOTSUPP; }
  long user_update(const void* key, const void* value, uint64_t flags) override {
    return update(key, value, flags, 0);
  }
  long get_next_key(const void* key, void* next_key) override {
    return array_next_key(def().max_entries, key, next_key);
  }
  std::vector<Pool> value_pools() override { return {slots_.pool()}; }
  bool prog_readonly() const override { return true; }

 private:
  mutable SlotArray slots_;
};

}  // namespace knod::maps
