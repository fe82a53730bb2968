// What `knod prog list` and `knod map list` print about an object: programs and maps in the
// spirit of `bpftool prog show` / `bpftool map show` (text, or JSON with bpftool's keys).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "loader/object.h"

namespace knod::cli {

/// Indices into obj.maps of the maps a program references (ld_imm64 BPF_PSEUDO_MAP_IDX and
/// BPF_PSEUDO_MAP_IDX_VALUE, its subprograms included), ascending, without duplicates.
std::vector<uint32_t> program_map_ids(const loader::ProgramSpec& p);

/// bpftool's type names: "xdp", "sched_cls"... (libbpf_bpf_prog_type_str); "hash",
/// "percpu_array", "lpm_trie"... (libbpf_bpf_map_type_str); "type N" when libbpf has none.
std::string prog_type_name(uint32_t type);
std::string map_type_name(uint32_t type);

/// [{"id", "type", "name", "section", "insns", "bytes_xlated", "gpl_compatible", "map_ids",
///   "maps"}] — id is the program's index in the object.
nlohmann::json programs_json(const loader::Object& obj);
/// [{"id", "type", "name", "flags", "bytes_key", "bytes_value", "max_entries"}] — id is the
/// map's index in the object (the imm of BPF_PSEUDO_MAP_IDX).
nlohmann::json maps_json(const loader::Object& obj);

/// bpftool-like text of programs_json / maps_json, one block per entry.
void print_programs(const nlohmann::json& programs);
void print_maps(const nlohmann::json& maps);

}  // namespace knod::cli
