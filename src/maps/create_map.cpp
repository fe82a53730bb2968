// create_map(): the map family for def.type (kernel bpf_map_types).
#include <new>

#include "base/error.h"
#include "maps/array.h"
#include "maps/cpumap.h"
#include "maps/devmap.h"
#include "maps/hash.h"
#include "maps/lpm_trie.h"
#include "maps/map_in_map.h"
#include "maps/perf_event_array.h"
#include "maps/prog_array.h"
#include "maps/queue_stack.h"
#include "maps/ringbuf.h"
#include "maps/util.h"
#include "maps/xskmap.h"

namespace knod::maps {

namespace {

/// Rough bytes a map preallocates (keys, values, links), to refuse absurd definitions before
/// allocating (the kernel answers -ENOMEM / -E2BIG for these).
uint64_t footprint(const MapDef& d, uint32_t ncpus) {
  uint64_t n = d.max_entries;
  uint64_t per_cpu = (d.type == BPF_MAP_TYPE_PERCPU_ARRAY || d.type == BPF_MAP_TYPE_PERCPU_HASH ||
                      d.type == BPF_MAP_TYPE_LRU_PERCPU_HASH)
                         ? ncpus
                         : 1;
  switch (d.type) {
    case BPF_MAP_TYPE_RINGBUF:
      return 2 * n;
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      return n * (PerfEventArray::kDefaultSlotBytes + 16);
    default:
      return n * (round_up8(d.key_size) + round_up8(d.value_size) * per_cpu + 32);
  }
}

MapPtr make(const std::string& name, const MapDef& def, uint32_t ncpus) {
  switch (def.type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
      return std::make_shared<ArrayMap>(name, def, ncpus);
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      return std::make_shared<HashMap>(name, def, ncpus);
    case BPF_MAP_TYPE_LPM_TRIE:
      return std::make_shared<LpmTrieMap>(name, def);
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
      return std::make_shared<MapOfMaps>(name, def);
    case BPF_MAP_TYPE_PROG_ARRAY:
      return std::make_shared<ProgArray>(name, def);
    case BPF_MAP_TYPE_DEVMAP:
    case BPF_MAP_TYPE_DEVMAP_HASH:
      return std::make_shared<DevMap>(name, def);
    case BPF_MAP_TYPE_CPUMAP:
      return std::make_shared<CpuMap>(name, def, ncpus);
    case BPF_MAP_TYPE_XSKMAP:
      return std::make_shared<XskMap>(name, def);
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      return std::make_shared<PerfEventArray>(name, def);
    case BPF_MAP_TYPE_RINGBUF:
      return std::make_shared<RingBuf>(name, def);
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
      return std::make_shared<QueueStackMap>(name, def);
    default:
      throw Error("map '" + name + "': " + map_type_name(def.type) + " is not supported by knod");
  }
}

}  // namespace

MapPtr create_map(const std::string& name, const MapDef& def, uint32_t ncpus) {
  if (ncpus == 0) throw Error("map '" + name + "': ncpus must be at least 1");
  if (def.spin_lock_off >= 0) {  // map_check_btf(): BPF_SPIN_LOCK
    if (def.type != BPF_MAP_TYPE_HASH && def.type != BPF_MAP_TYPE_ARRAY)
      bad_def(name, def, "a bpf_spin_lock in the value needs a HASH or ARRAY map", "EOPNOTSUPP");
    if (def.spin_lock_off % 4 || uint64_t(def.spin_lock_off) + 4 > def.value_size)
      bad_def(name, def, "bpf_spin_lock not 4-byte aligned inside the value");
  }
  if (footprint(def, ncpus) > kMaxMapBytes)
    bad_def(name, def,
            "max_entries " + std::to_string(def.max_entries) + " needs more than " +
                std::to_string(kMaxMapBytes >> 20) + " MiB",
            "ENOMEM");
  try {
    return make(name, def, ncpus);
  } catch (const std::bad_alloc&) {
    bad_def(name, def, "out of memory", "ENOMEM");
  }
}

}  // namespace knod::maps
