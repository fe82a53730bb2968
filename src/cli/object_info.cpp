#include "cli/object_info.h"

#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

namespace knod::cli {

std::vector<uint32_t> program_map_ids(const loader::ProgramSpec& p) {
  std::set<uint32_t> ids;
  for (size_t pc = 0; pc < p.insns.size(); ++pc) {
    const Insn& i = p.insns[pc];
    if (!is_lddw(i)) continue;
    if (i.src_reg == BPF_PSEUDO_MAP_IDX || i.src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
      ids.insert(static_cast<uint32_t>(i.imm));
    ++pc;  // second slot of ld_imm64
  }
  return {ids.begin(), ids.end()};
}

std::string prog_type_name(uint32_t type) {
  const char* s = libbpf_bpf_prog_type_str(static_cast<bpf_prog_type>(type));
  return s ? s : fmt::format("type {}", type);
}

std::string map_type_name(uint32_t type) {
  const char* s = libbpf_bpf_map_type_str(static_cast<bpf_map_type>(type));
  return s ? s : fmt::format("type {}", type);
}

nlohmann::json programs_json(const loader::Object& obj) {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < obj.programs.size(); ++i) {
    const loader::ProgramSpec& p = obj.programs[i];
    nlohmann::json names = nlohmann::json::array();
    std::vector<uint32_t> ids = program_map_ids(p);
    for (uint32_t id : ids)
      names.push_back(id < obj.map_specs.size() ? obj.map_specs[id].name : fmt::format("#{}", id));
    all.push_back({{"id", i},
                   {"type", prog_type_name(p.prog_type)},
                   {"name", p.name},
                   {"section", p.section},
                   {"insns", p.insns.size()},
                   {"bytes_xlated", p.insns.size() * sizeof(Insn)},
                   {"gpl_compatible", obj.gpl_compatible()},
                   {"map_ids", ids},
                   {"maps", names}});
  }
  return all;
}

nlohmann::json maps_json(const loader::Object& obj) {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < obj.map_specs.size(); ++i) {
    const loader::MapSpec& s = obj.map_specs[i];
    // The live map holds the resolved definition (max_entries after --max-entries).
    const maps::MapDef& d = i < obj.maps.size() && obj.maps[i] ? obj.maps[i]->def() : s.def;
    all.push_back({{"id", i},
                   {"type", map_type_name(d.type)},
                   {"name", s.name},
                   {"flags", d.map_flags},
                   {"bytes_key", d.key_size},
                   {"bytes_value", d.value_size},
                   {"max_entries", d.max_entries}});
  }
  return all;
}

void print_programs(const nlohmann::json& programs) {
  for (const nlohmann::json& p : programs) {
    fmt::print("{}: {}  name {}  section {}\n", p["id"].get<size_t>(), p["type"].get<std::string>(),
               p["name"].get<std::string>(), p["section"].get<std::string>());
    fmt::print("\tinsns {}  xlated {}B", p["insns"].get<size_t>(), p["bytes_xlated"].get<size_t>());
    if (p["gpl_compatible"].get<bool>()) fmt::print("  gpl");
    if (!p["maps"].empty())
      fmt::print("  maps {}", fmt::join(p["maps"].get<std::vector<std::string>>(), ","));
    fmt::print("\n");
  }
}

void print_maps(const nlohmann::json& maps) {
  for (const nlohmann::json& m : maps) {
    fmt::print("{}: {}  name {}  flags 0x{:x}\n", m["id"].get<size_t>(),
               m["type"].get<std::string>(), m["name"].get<std::string>(),
               m["flags"].get<uint32_t>());
    fmt::print("\tkey {}B  value {}B  max_entries {}\n", m["bytes_key"].get<uint32_t>(),
               m["bytes_value"].get<uint32_t>(), m["max_entries"].get<uint32_t>());
  }
}

}  // namespace knod::cli
