// kernel::Object::preload: a knod map preload (examples/xdp/README.md) applied through
// bpf_map_update_elem, as examples/xdp/preload.cpp does for the kernel check.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "kernel/object.h"

namespace knod::kernel {
namespace {
bool per_cpu(bpf_map_type t) {
  return t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
         t == BPF_MAP_TYPE_LRU_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}
}  // namespace

void Object::preload(const io::MapPreload& preload, const std::string& what,
                     uint32_t devmap_ifindex) {
  for (const auto& [name, entries] : preload) {
    bpf_map* map = bpf_object__find_map_by_name(obj_, name.c_str());
    if (!map) throw Error(fmt::format("{}: no map named {}", what, name));
    const bpf_map_type type = bpf_map__type(map);
    const uint32_t ksize = bpf_map__key_size(map), vsize = bpf_map__value_size(map);
    for (size_t i = 0; i < entries.size(); ++i) {
      const io::MapEntry& e = entries[i];
      const std::string where = fmt::format("{}: {}[{}]", what, name, i);
      std::vector<uint8_t> value = e.value;
      if (!e.prog.empty()) {
        bpf_program* p = bpf_object__find_program_by_name(obj_, e.prog.c_str());
        if (!p) throw Error(fmt::format("{}: no program named {}", where, e.prog));
        const int fd = bpf_program__fd(p);
        value.resize(4);
        std::memcpy(value.data(), &fd, 4);
      }
      if (e.key.size() != ksize || value.size() != vsize)
        throw Error(fmt::format("{}: key/value are {}/{} bytes, map wants {}/{}", where,
                                e.key.size(), value.size(), ksize, vsize));
      if ((type == BPF_MAP_TYPE_DEVMAP || type == BPF_MAP_TYPE_DEVMAP_HASH) && devmap_ifindex)
        std::memcpy(value.data(), &devmap_ifindex, 4);
      if (per_cpu(type)) {  // round_up(value_size, 8) bytes per possible CPU
        const size_t stride = (vsize + 7) & ~size_t(7);
        std::vector<uint8_t> all(stride * possible_cpus());
        for (size_t c = 0; c < possible_cpus(); ++c)
          std::memcpy(&all[stride * c], value.data(), vsize);
        value = std::move(all);
      }
      if (bpf_map_update_elem(bpf_map__fd(map), e.key.data(), value.data(), BPF_ANY))
        throw Error(fmt::format("{}: bpf_map_update_elem: {}", where, strerror(errno)));
    }
  }
}

}  // namespace knod::kernel
