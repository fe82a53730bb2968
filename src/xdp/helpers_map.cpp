// Map helpers: bpf_map_lookup_elem (1), bpf_map_update_elem (2), bpf_map_delete_elem (3),
// bpf_map_push_elem (87), bpf_map_pop_elem (88), bpf_map_peek_elem (89), bpf_spin_lock (93),
// bpf_spin_unlock (94), bpf_for_each_map_elem (164), bpf_map_lookup_percpu_elem (195).
// Source: kernel/bpf/helpers.c, kernel/bpf/{arraymap,hashtab}.c (map_for_each_callback,
// *_lookup_percpu_elem).
#include <atomic>
#include <cstring>
#include <vector>

#include "maps/spin_lock.h"
#include "xdp/buff.h"
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

maps::Map* map_with_key(vm::Run& run, uint64_t m, uint64_t key) {
  maps::Map* map = run.map_arg(m);
  if (!map || !arg_mem(run, key, map->def().key_size, false)) return nullptr;
  return map;
}

uint64_t map_lookup_elem(vm::Run& run, uint64_t m, uint64_t key, uint64_t, uint64_t, uint64_t) {
  maps::Map* map = map_with_key(run, m, key);
  if (!map) return 0;
  return reinterpret_cast<uint64_t>(map->lookup(ptr<const void>(key), run.cpu));
}

// bpf_map_lookup_percpu_elem: `key`'s value on CPU `cpu` of a PERCPU_ARRAY, PERCPU_HASH or
// LRU_PERCPU_HASH, or NULL when the key is absent or cpu >= the map's CPUs (nr_cpu_ids). The
// kernel's verifier refuses other map types; knod returns NULL for them.
uint64_t map_lookup_percpu_elem(vm::Run& run, uint64_t m, uint64_t key, uint64_t cpu, uint64_t,
                                uint64_t) {
  maps::Map* map = map_with_key(run, m, key);
  if (!map || cpu > UINT32_MAX) return 0;
  const uint32_t t = map->def().type;
  if (t != BPF_MAP_TYPE_PERCPU_ARRAY && t != BPF_MAP_TYPE_PERCPU_HASH &&
      t != BPF_MAP_TYPE_LRU_PERCPU_HASH)
    return 0;
  return reinterpret_cast<uint64_t>(map->lookup(ptr<const void>(key), uint32_t(cpu)));
}

uint64_t map_update_elem(vm::Run& run, uint64_t m, uint64_t key, uint64_t value, uint64_t flags,
                         uint64_t) {
  maps::Map* map = map_with_key(run, m, key);
  if (!map || !arg_mem(run, value, map->def().value_size, false)) return 0;
  return uint64_t(map->update(ptr<const void>(key), ptr<const void>(value), flags, run.cpu));
}

uint64_t map_delete_elem(vm::Run& run, uint64_t m, uint64_t key, uint64_t, uint64_t, uint64_t) {
  maps::Map* map = map_with_key(run, m, key);
  if (!map) return 0;
  return uint64_t(map->remove(ptr<const void>(key)));
}

uint64_t map_push_elem(vm::Run& run, uint64_t m, uint64_t value, uint64_t flags, uint64_t,
                       uint64_t) {
  maps::Map* map = run.map_arg(m);
  if (!map || !arg_mem(run, value, map->def().value_size, false)) return 0;
  return uint64_t(map->push(ptr<const void>(value), flags));
}

uint64_t map_pop_elem(vm::Run& run, uint64_t m, uint64_t value, uint64_t, uint64_t, uint64_t) {
  maps::Map* map = run.map_arg(m);
  if (!map || !arg_mem(run, value, map->def().value_size, true)) return 0;
  return uint64_t(map->pop(ptr<void>(value)));
}

uint64_t map_peek_elem(vm::Run& run, uint64_t m, uint64_t value, uint64_t, uint64_t, uint64_t) {
  maps::Map* map = run.map_arg(m);
  if (!map || !arg_mem(run, value, map->def().value_size, true)) return 0;
  return uint64_t(map->peek(ptr<void>(value)));
}

// struct bpf_spin_lock { __u32 val; } inside a map value. A real lock: several CPUs of a
// device may run the program at once. The lock a program still holds when its run faults is
// released by the runtime (Buff::held_lock); the kernel's verifier makes that impossible.
uint64_t spin_lock(vm::Run& run, uint64_t lock, uint64_t, uint64_t, uint64_t, uint64_t) {
  if (lock % 4 != 0 || !arg_mem(run, lock, 4, true)) return 0;
  auto* b = static_cast<Buff*>(run.prog_state);
  if (b && b->held_lock) {  // verifier: "Locking two bpf_spin_locks are not allowed"
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  if (!maps::value_lock(ptr<uint32_t>(lock))) {  // never released (maps/spin_lock.h)
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  if (b) b->held_lock = lock;
  return 0;
}

uint64_t spin_unlock(vm::Run& run, uint64_t lock, uint64_t, uint64_t, uint64_t, uint64_t) {
  if (lock % 4 != 0 || !arg_mem(run, lock, 4, true)) return 0;
  auto* b = static_cast<Buff*>(run.prog_state);
  if (b && b->held_lock != lock) {  // verifier: "bpf_spin_unlock of different lock"
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  maps::value_unlock(ptr<uint32_t>(lock));
  if (b) b->held_lock = 0;
  return 0;
}

/// A read-only region holding `key` while callbacks run (the kernel hands out a pointer to
/// the element's key: PTR_TO_MAP_KEY). Removed again when it is the newest region.
struct KeyRegion {
  vm::Run& run;
  int idx;
  KeyRegion(vm::Run& r, const void* key, uint32_t size)
      : run(r),
        idx(r.add_region(reinterpret_cast<uint64_t>(key), reinterpret_cast<uint64_t>(key) + size,
                         false)) {}
  ~KeyRegion() {
    if (idx >= 0 && uint32_t(idx) + 1 == run.nregions) --run.nregions;
  }
};

// bpf_for_each_map_elem(map, callback_fn, callback_ctx, flags): calls
// callback_fn(map, key, value, callback_ctx) per element until it returns 1; returns the
// number of elements visited. Array maps visit every index; hash maps every key present
// when the call starts (kernel order: hash buckets; here: BPF_MAP_GET_NEXT_KEY order).
uint64_t for_each_map_elem(vm::Run& run, uint64_t m, uint64_t fn, uint64_t cb_ctx, uint64_t flags,
                           uint64_t) {
  maps::Map* map = run.map_arg(m);
  if (!map) return 0;
  if (flags) return neg(EINVAL);
  if (!run.call_func) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  const uint32_t ks = map->def().key_size;
  std::vector<std::vector<uint8_t>> keys;
  const uint32_t type = map->def().type;
  if (type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY) {
    for (uint32_t i = 0; i < map->def().max_entries; ++i) {
      std::vector<uint8_t> k(4);
      std::memcpy(k.data(), &i, 4);
      keys.push_back(std::move(k));
    }
  } else if (type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH ||
             type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH) {
    std::vector<uint8_t> k(ks), next(ks);
    const void* prev = nullptr;
    while (keys.size() <= map->def().max_entries && map->get_next_key(prev, next.data()) == 0) {
      keys.push_back(next);
      k = next;
      prev = k.data();
    }
  } else {
    return neg(kEnotsupp);
  }
  uint64_t visited = 0;
  for (auto& k : keys) {
    void* v = map->lookup(k.data(), run.cpu);
    if (!v) continue;
    KeyRegion kr(run, k.data(), ks);
    uint64_t ret = run.call_func(run, fn, m, reinterpret_cast<uint64_t>(k.data()),
                                 reinterpret_cast<uint64_t>(v), cb_ctx, 0);
    ++visited;
    if (run.fault != vm::Fault::kNone || run.exit_now) return 0;
    if (ret) break;
  }
  return visited;
}

}  // namespace

void add_map_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_map_lookup_elem, "bpf_map_lookup_elem", map_lookup_elem);
  set_helper(t, BPF_FUNC_map_update_elem, "bpf_map_update_elem", map_update_elem);
  set_helper(t, BPF_FUNC_map_delete_elem, "bpf_map_delete_elem", map_delete_elem);
  set_helper(t, BPF_FUNC_map_push_elem, "bpf_map_push_elem", map_push_elem);
  set_helper(t, BPF_FUNC_map_pop_elem, "bpf_map_pop_elem", map_pop_elem);
  set_helper(t, BPF_FUNC_map_peek_elem, "bpf_map_peek_elem", map_peek_elem);
  set_helper(t, BPF_FUNC_spin_lock, "bpf_spin_lock", spin_lock);
  set_helper(t, BPF_FUNC_spin_unlock, "bpf_spin_unlock", spin_unlock);
  set_helper(t, BPF_FUNC_for_each_map_elem, "bpf_for_each_map_elem", for_each_map_elem);
  set_helper(t, BPF_FUNC_map_lookup_percpu_elem, "bpf_map_lookup_percpu_elem",
             map_lookup_percpu_elem);
}

}  // namespace knod::xdp
