// `knod map list OBJ` and `knod map dump OBJ [--map-load F.json] [-m NAME]`: an object's maps
// after creation and preload, as `bpftool map show` / `bpftool map dump` print kernel maps.
#include <fmt/core.h>
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/command.h"
#include "cli/load_args.h"
#include "cli/object_info.h"
#include "io/map_json.h"
#include "loader/object.h"

namespace {

struct MapArgs {
  std::string obj;
  std::vector<std::string> names, map_load, max_entries;
  bool json = false;
};

knod::loader::Object open(const MapArgs& a) {
  knod::loader::LoadOptions lo;
  knod::cli::parse_max_entries(a.max_entries, lo);
  knod::loader::Object obj = knod::loader::load_object(a.obj, lo);
  knod::cli::check_max_entries_names(a.max_entries, obj);
  knod::cli::apply_map_loads(a.map_load, obj);
  for (const std::string& n : a.names)
    if (obj.find_map(n) < 0) throw knod::Error(fmt::format("{}: no map '{}'", a.obj, n));
  return obj;
}

/// Keeps the entries of `all` (a JSON array of objects with "name") named in `names`.
nlohmann::json only(const nlohmann::json& all, const std::vector<std::string>& names) {
  if (names.empty()) return all;
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& m : all)
    if (std::find(names.begin(), names.end(), m["name"].get<std::string>()) != names.end())
      out.push_back(m);
  return out;
}

/// ["0x0a", "0x00"] → "0a 00" (bpftool's text).
std::string bytes(const nlohmann::json& list) {
  std::string s;
  for (const nlohmann::json& b : list) {
    if (!s.empty()) s += ' ';
    s += b.get<std::string>().substr(2);
  }
  return s;
}

int list(const MapArgs& a) {
  knod::loader::Object obj = open(a);
  nlohmann::json maps = only(knod::cli::maps_json(obj), a.names);
  if (a.json)
    fmt::print("{}\n", maps.dump(2));
  else if (maps.empty())
    fmt::print("no maps\n");
  else
    knod::cli::print_maps(maps);
  return 0;
}

int dump(const MapArgs& a) {
  knod::loader::Object obj = open(a);
  nlohmann::json maps = only(knod::io::dump_maps_json(obj), a.names);
  if (a.json) {
    fmt::print("{}\n", maps.dump(2));
    return 0;
  }
  if (maps.empty()) fmt::print("no maps\n");
  for (size_t k = 0; k < maps.size(); ++k) {
    const nlohmann::json& m = maps[k];
    if (k) fmt::print("\n");
    fmt::print("{}: {}  key {}B  value {}B  max_entries {}\n", m["name"].get<std::string>(),
               knod::cli::map_type_name(m["type"].get<uint32_t>()), m["key_size"].get<uint32_t>(),
               m["value_size"].get<uint32_t>(), m["max_entries"].get<uint32_t>());
    for (const nlohmann::json& e : m["entries"]) {
      if (e.contains("values")) {
        fmt::print("key: {}\n", bytes(e["key"]));
        for (const nlohmann::json& v : e["values"])
          fmt::print("value (CPU {:02}): {}\n", v["cpu"].get<uint32_t>(), bytes(v["value"]));
      } else {
        fmt::print("key: {}  value: {}\n", bytes(e["key"]), bytes(e["value"]));
      }
    }
    size_t n = m["entries"].size();
    fmt::print("Found {} element{}\n", n, n == 1 ? "" : "s");
  }
  return 0;
}

}  // namespace

KNOD_COMMAND(map) {
  auto* c = app.add_subcommand("map", "Inspect an object's maps (like bpftool map)");
  c->require_subcommand(1);
  auto* l = c->add_subcommand("list", "Maps of an object: type, key/value sizes, max_entries");
  l->alias("show");
  auto* d = c->add_subcommand("dump", "Map contents after creation and --map-load preload");
  for (CLI::App* s : {l, d}) {
    auto a = std::make_shared<MapArgs>();
    s->add_option("object", a->obj, "eBPF ELF object (clang -target bpf)")->required();
    s->add_option("-m,--map", a->names, "only this map (repeatable; default: all)")
        ->allow_extra_args(false);
    s->add_flag("-j,--json", a->json, "JSON output (dump: as knod run --map-dump writes it)");
    s->add_option("--max-entries", a->max_entries,
                  "NAME=N: max_entries of map NAME; N: for maps declared with 0 (repeatable)")
        ->allow_extra_args(false);
    if (s == d)
      s->add_option("--map-load", a->map_load, "preload maps: FILE.json or NAME=FILE.json")
          ->allow_extra_args(false);
    bool is_list = s == l;
    s->callback([a, is_list, set_action] {
      set_action([a, is_list] { return is_list ? list(*a) : dump(*a); });
    });
  }
}
