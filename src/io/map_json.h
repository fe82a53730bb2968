// Map preload and dump files (JSON). Preload format: examples/xdp/README.md
//   {"maps": {"<name>": [{"key": "<hex>", "value": "<hex>"} | {"key": "<hex>", "prog": "<prog>"}]}}
// Dump format follows `bpftool map dump -j` (raw form): per map a list of
//   {"key": ["0x0a", ...], "value": ["0x01", ...]}  or, per-CPU,
//   {"key": [...], "values": [{"cpu": 0, "value": [...]}, ...]}.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "loader/object.h"

namespace knod::io {

struct MapEntry {
  std::vector<uint8_t> key;
  std::vector<uint8_t> value;  ///< one value (per-CPU maps: stored on every CPU)
  std::string prog;            ///< PROG_ARRAY: program name instead of a value
};

/// Preload file contents: map name → entries in file order.
using MapPreload = std::vector<std::pair<std::string, std::vector<MapEntry>>>;

/// Parses a preload file. Throws knod::Error naming the file (unreadable, malformed JSON,
/// bad hex, missing key/value).
MapPreload read_map_preload(const std::string& path);

/// Applies `preload` to the object's maps with BPF_ANY, in order. Checks names and sizes
/// (error "<what>: <map>[<i>]: key/value are K/V bytes, map wants KS/VS"); PROG_ARRAY "prog"
/// names become program indices of `obj.programs`. Throws knod::Error.
void apply_map_preload(const MapPreload& preload, const loader::Object& obj,
                       const std::string& what);

/// Decodes hex ("0a0b", "0a:0b", "0a 0b"); throws knod::Error on odd length or a bad digit.
std::vector<uint8_t> parse_hex(const std::string& hex);

/// Every map's contents (BPF_MAP_GET_NEXT_KEY order) as bpftool-style JSON:
/// [{"name": .., "type": .., "key_size": .., "value_size": .., "entries": [...]}].
/// PROG_ARRAY values are program indices; RINGBUF/PERF_EVENT_ARRAY/QUEUE/STACK list no entries.
nlohmann::json dump_maps_json(const loader::Object& obj);

/// One map's entries, key bytes and user-side value bytes (per-CPU: ncpus slots of
/// round_up(value_size, 8)), in BPF_MAP_GET_NEXT_KEY order: the order in which `bpftool map
/// dump` lists a kernel map's (an ARRAY by index, an LPM_TRIE in post-order,
/// kernel/bpf/lpm_trie.c). At most max_entries entries.
std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> map_entries(maps::Map& map);

/// The same entries by key bytes, for comparing two maps' contents.
std::map<std::vector<uint8_t>, std::vector<uint8_t>> map_contents(maps::Map& map);

}  // namespace knod::io
