// preload_maps: the maps.json format applied through libbpf.
#include "preload.h"

#include <bpf/bpf.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/map_json.h"  // parse_hex: the one hex grammar of map files

namespace knod::examples {

static bool is_percpu(bpf_map_type t) {
  return t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
         t == BPF_MAP_TYPE_LRU_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

int preload_maps(bpf_object* obj, const std::string& json_path, uint32_t devmap_ifindex) {
  std::ifstream in(json_path);
  if (!in) throw std::runtime_error(json_path + ": cannot open");
  nlohmann::json doc = nlohmann::json::parse(in);
  int written = 0;
  for (auto& [name, entries] : doc.at("maps").items()) {
    bpf_map* map = bpf_object__find_map_by_name(obj, name.c_str());
    if (!map) throw std::runtime_error(json_path + ": no map named " + name);
    const auto type = bpf_map__type(map);
    const uint32_t ksize = bpf_map__key_size(map), vsize = bpf_map__value_size(map);
    int i = 0;
    for (const auto& e : entries) {
      std::string where = json_path + ": " + name + "[" + std::to_string(i++) + "]";
      std::vector<uint8_t> key = io::parse_hex(e.at("key").get<std::string>());
      std::vector<uint8_t> value;
      if (e.contains("prog")) {
        std::string prog = e.at("prog").get<std::string>();
        bpf_program* p = bpf_object__find_program_by_name(obj, prog.c_str());
        if (!p) throw std::runtime_error(where + ": no program named " + prog);
        uint32_t fd = uint32_t(bpf_program__fd(p));
        value.resize(4);
        std::memcpy(value.data(), &fd, 4);
      } else {
        value = io::parse_hex(e.at("value").get<std::string>());
      }
      if (key.size() != ksize || value.size() != vsize)
        throw std::runtime_error(where + ": key/value are " + std::to_string(key.size()) + "/" +
                                 std::to_string(value.size()) + " bytes, map wants " +
                                 std::to_string(ksize) + "/" + std::to_string(vsize));
      if ((type == BPF_MAP_TYPE_DEVMAP || type == BPF_MAP_TYPE_DEVMAP_HASH) && devmap_ifindex)
        std::memcpy(value.data(), &devmap_ifindex, 4);
      if (is_percpu(type)) {
        // The kernel takes round_up(value_size, 8) bytes per possible CPU.
        const size_t stride = (vsize + 7) & ~size_t(7);
        const int ncpus = libbpf_num_possible_cpus();
        std::vector<uint8_t> all(stride * size_t(ncpus));
        for (int c = 0; c < ncpus; c++) std::memcpy(&all[stride * size_t(c)], value.data(), vsize);
        value = std::move(all);
      }
      if (bpf_map_update_elem(bpf_map__fd(map), key.data(), value.data(), BPF_ANY))
        throw std::runtime_error(where + ": bpf_map_update_elem: " + std::strerror(errno));
      written++;
    }
  }
  return written;
}

}  // namespace knod::examples
