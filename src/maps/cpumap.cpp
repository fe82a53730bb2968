#include "maps/cpumap.h"

namespace knod::maps {

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size != 4) bad_def(name, def, "key_size must be 4");
  if (def.value_size != 4 && def.value_size != 8)
    bad_def(name, def, "value_size must be 4 (qsize) or 8 (struct bpf_cpumap_val)");
  check_flags(name, def, BPF_F_NUMA_NODE);
  if (def.max_entries > 8192) bad_def(name, def, "max_entries over NR_CPUS", "E2BIG");
  return def;
}
}  // namespace

CpuMap::CpuMap(std::string name, MapDef def, uint32_t ncpus)
    : Map(name, checked(name, def)),
      ncpus_(ncpus),
      slots_(def.max_entries, sizeof(bpf_cpumap_val)) {}

const bpf_cpumap_val* CpuMap::get(uint32_t key) {
  if (key >= def().max_entries || !slots_.present(key)) return nullptr;
  return reinterpret_cast<const bpf_cpumap_val*>(slots_.at(key));
}

long CpuMap::update(const void* key, const void* value, uint64_t flags, uint32_t) {
  bpf_cpumap_val v{};
  std::memcpy(&v, value, def().value_size);
  uint32_t k = key_u32(key);
  if (flags > BPF_EXIST) return -EINVAL;
  if (k >= def().max_entries) return -E2BIG;
  if (flags == BPF_NOEXIST) return -EEXIST;
  if (v.qsize > 16384) return -EOVERFLOW;
  if (k >= ncpus_) return -ENODEV;
  if (v.qsize == 0) {
    slots_.clear(k);
    return 0;
  }
  if (v.bpf_prog.fd > 0) return -EOPNOTSUPP;
  v.bpf_prog.id = 0;
  slots_.set(k, &v);
  return 0;
}

long CpuMap::remove(const void* key) {
  uint32_t k = key_u32(key);
  if (k >= def().max_entries) return -EINVAL;
  slots_.clear(k);
  return 0;
}

long CpuMap::user_lookup(const void* key, void* value) {
  const bpf_cpumap_val* v = get(key_u32(key));
  if (!v) return -ENOENT;
  std::memcpy(value, v, def().value_size);
  return 0;
}

}  // namespace knod::maps
