#include "diff_common.h"

#include <linux/bpf.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "edge_packets.h"
#include "io/pcap.h"
#include "loader/object.h"

namespace knod::diff {

std::vector<std::string> example_names() {
  std::vector<std::string> out;
  std::string list = KNOD_XDP_EXAMPLES, cur;
  for (char c : list + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

std::string object_path(const std::string& name) {
  return std::string(KNOD_XDP_OBJ_DIR) + "/" + name + ".o";
}

std::string preload_path(const std::string& name) {
  return std::string(KNOD_XDP_SRC_DIR) + "/" + name + ".maps.json";
}

std::vector<std::string> capture_paths() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(KNOD_PCAP_DIR))
    if (e.path().extension() == ".pcap") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Input> all_inputs() {
  std::vector<Input> out;
  for (const std::string& path : capture_paths()) {
    Input in;
    in.name = std::filesystem::path(path).filename().string();
    io::PcapReader r(path);
    io::Packet p;
    while (r.next(p)) in.packets.emplace_back("frame " + std::to_string(in.packets.size()), p.data);
    out.push_back(std::move(in));
  }
  Input edge;
  edge.name = "edge";
  for (auto& e : edge_packets()) edge.packets.emplace_back(e.name, std::move(e.data));
  out.push_back(std::move(edge));
  return out;
}

std::set<uint32_t> devmap_ports(const io::MapPreload& preload, const std::string& object) {
  const loader::Object o = loader::load_object(object);
  std::set<uint32_t> ports;
  for (const auto& [map, entries] : preload) {
    const int i = o.find_map(map);
    if (i < 0) continue;
    const auto t = o.maps[size_t(i)]->def().type;
    if (t != BPF_MAP_TYPE_DEVMAP && t != BPF_MAP_TYPE_DEVMAP_HASH) continue;
    for (const auto& e : entries) {
      uint32_t v = 0;
      if (e.value.size() >= 4) std::memcpy(&v, e.value.data(), 4);
      ports.insert(v);
    }
  }
  return ports;
}

bool uses_fib_lookup(const std::string& object) {
  const loader::Object o = loader::load_object(object);
  for (const auto& p : o.programs)
    for (const auto& i : p.insns)
      if (i.code == (BPF_JMP | BPF_CALL) && i.src_reg == 0 && i.imm == BPF_FUNC_fib_lookup)
        return true;
  return false;
}

std::string hex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

}  // namespace knod::diff
