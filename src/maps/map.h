// knod maps: host-side BPF maps with the kernel's semantics (kernel/bpf/*.c, linux/bpf.h).
// Programs reach them through helpers (bpf_map_lookup_elem...); users through the
// bpftool-like "user" calls. Errors are the kernel's negative errno values.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace knod::maps {

/// What defines a map, as in `struct bpf_map_def` / BTF `.maps` (linux/bpf.h BPF_MAP_TYPE_*).
struct MapDef {
  uint32_t type = 0;         ///< enum bpf_map_type
  uint32_t key_size = 0;     ///< bytes
  uint32_t value_size = 0;   ///< bytes (per CPU for per-CPU maps)
  uint32_t max_entries = 0;  ///< entries; 0 is resolved by the loader (see LoadOptions)
  uint32_t map_flags = 0;    ///< BPF_F_* (BPF_F_NO_PREALLOC, BPF_F_RDONLY_PROG, ...)
  int32_t inner_map = -1;    ///< map-in-map: index of the inner map template in the object, or -1
  /// Byte offset of the value's `struct bpf_spin_lock` (BTF), or -1 (maps/spin_lock.h).
  int32_t spin_lock_off = -1;
};

/// One BPF map. Program-side calls are what helpers use; they run on the data path and never
/// throw. Pointers returned by lookup() stay valid until the element is deleted (the kernel's
/// RCU guarantee for one program run).
class Map {
 public:
  Map(std::string name, MapDef def) : name_(std::move(name)), def_(def) {}
  virtual ~Map() = default;
  Map(const Map&) = delete;
  Map& operator=(const Map&) = delete;

  const std::string& name() const { return name_; }
  const MapDef& def() const { return def_; }

  // ---- program side (bpf helpers 1-3, 87-89); `cpu` selects the per-CPU slot -------------
  /// bpf_map_lookup_elem: value pointer (value_size bytes, writable unless BPF_F_RDONLY_PROG)
  /// or nullptr. Per-CPU maps return the slot of `cpu`.
  virtual void* lookup(const void* key, uint32_t cpu) = 0;
  /// bpf_map_update_elem: 0, -ENOENT, -EEXIST, -E2BIG, -EINVAL (flags BPF_ANY/NOEXIST/EXIST).
  virtual long update(const void* key, const void* value, uint64_t flags, uint32_t cpu) = 0;
  /// bpf_map_delete_elem: 0, -ENOENT, -EINVAL.
  virtual long remove(const void* key) = 0;
  /// bpf_map_push_elem / pop / peek (QUEUE, STACK); others return -EOPNOTSUPP... as the kernel.
  virtual long push(const void* /*value*/, uint64_t /*flags*/) { return -95; /* -EOPNOTSUPP */ }
  virtual long pop(void* /*value*/) { return -95; }
  virtual long peek(void* /*value*/) { return -95; }

  // ---- user side (bpftool map dump/update/lookup; BPF_MAP_*_ELEM syscalls) -----------------
  /// Bytes of a user-side value: value_size, or ncpus * round_up(value_size, 8) for per-CPU.
  virtual uint32_t user_value_size() const { return def_.value_size; }
  /// Copy out a value (all CPUs for per-CPU maps). 0 or -ENOENT.
  virtual long user_lookup(const void* key, void* value) = 0;
  /// Store a value (all CPUs for per-CPU maps). Same errors as update(); HASH and ARRAY maps
  /// check BPF_F_LOCK on a value without a bpf_spin_lock first (-EINVAL, the syscall's
  /// map_update_elem, where a program's update checks the index and flags first).
  virtual long user_update(const void* key, const void* value, uint64_t flags) = 0;
  /// BPF_MAP_GET_NEXT_KEY: key == nullptr gives the first key. 0 or -ENOENT at the end.
  virtual long get_next_key(const void* key, void* next_key) = 0;
  /// bpftool-style delete from user space. 0 or -ENOENT / -EINVAL.
  virtual long user_delete(const void* key) { return remove(key); }

  // ---- storage, for executors' bounds checks and device copies ---------------------------
  /// Contiguous preallocated storage holding every value lookup() can return (the kernel's
  /// default preallocation). Executors let programs touch exactly these bytes: with `stride`
  /// set, only the value_size bytes at base + i * stride (i = 0, 1, ...), so that an access
  /// past one value never reaches the next (the kernel verifier's check_map_access bound).
  struct Pool {
    void* base;
    size_t bytes;
    uint32_t stride = 0;      ///< bytes from one value to the next; 0: the pool is one region
    uint32_t value_size = 0;  ///< bytes of each value (<= stride)
  };
  virtual std::vector<Pool> value_pools() = 0;
  /// True when programs may only read the values (BPF_F_RDONLY_PROG, or map types whose
  /// values the kernel exposes read-only: DEVMAP, DEVMAP_HASH, XSKMAP, .rodata).
  virtual bool prog_readonly() const { return (def_.map_flags & BPF_F_RDONLY_PROG) != 0; }

 private:
  std::string name_;
  MapDef def_;
};

using MapPtr = std::shared_ptr<Map>;

/// Creates a map of def.type. Throws knod::Error with a clear message for unsupported types or
/// invalid definitions (same checks as the kernel's map_alloc_check, e.g. key_size 0 on HASH).
/// ncpus: number of per-CPU slots (workers of the device).
MapPtr create_map(const std::string& name, const MapDef& def, uint32_t ncpus);

}  // namespace knod::maps
