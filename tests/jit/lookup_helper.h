// A helper table with only bpf_map_lookup_elem (id 1), as the XDP runtime implements it
// (src/xdp/helpers_map.cpp: map_arg, key readable, Map::lookup on the run's cpu): what the
// interpreter calls where the JIT inlines the lookup (map_value_test, hash_lookup_test).
#pragma once

#include "maps/map.h"
#include "vm/abi.h"

namespace knod::jit::test {

inline uint64_t map_lookup(vm::Run& run, uint64_t map, uint64_t key, uint64_t, uint64_t, uint64_t) {
  maps::Map* m = run.map_arg(map);
  if (!m || !run.can_access(key, m->def().key_size, false)) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  return reinterpret_cast<uint64_t>(m->lookup(reinterpret_cast<const void*>(key), run.cpu));
}

inline const vm::HelperTable& lookup_helpers() {
  static const vm::HelperTable t = [] {
    vm::HelperTable h;
    h.fn[1] = map_lookup;
    return h;
  }();
  return t;
}

}  // namespace knod::jit::test
