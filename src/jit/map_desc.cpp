#include "jit/map_desc.h"

#include <linux/bpf.h>

#include "maps/array.h"
#include "maps/hash.h"

namespace knod::jit {

namespace {

bool values_typed(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_LPM_TRIE:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<MapDesc> describe_maps(const vm::Env& env, bool inline_arrays) {
  std::vector<MapDesc> out;
  out.reserve(env.maps.size());
  for (const maps::MapPtr& m : env.maps) {
    MapDesc d;
    const maps::MapDef& def = m->def();
    d.addr = reinterpret_cast<uint64_t>(m.get());
    d.type = def.type;
    d.key_size = def.key_size;
    d.value_size = def.value_size;
    d.max_entries = def.max_entries;
    d.values_typed = values_typed(def.type);
    d.readonly = m->prog_readonly();
    d.host = inline_arrays;
    if (auto* a = dynamic_cast<maps::ArrayMap*>(m.get())) {
      if (def.type == BPF_MAP_TYPE_ARRAY) d.value0 = reinterpret_cast<uint64_t>(a->at(0));
      if (inline_arrays) {
        d.values = reinterpret_cast<uint64_t>(a->values());
        d.stride = a->stride();
        d.ncpus = a->ncpus();
        d.cpu_slots = a->cpu_slots();
      }
    }
    if (auto* h = dynamic_cast<maps::HashMap*>(m.get()); h && inline_arrays) {
      d.hash = h->view();
      d.lru_ref = reinterpret_cast<uint64_t>(h->lru_ref());
      d.percpu = h->percpu();
      d.stride = h->stride();
      d.ncpus = h->ncpus();
      d.cpu_block = h->cpu_block();
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace knod::jit
