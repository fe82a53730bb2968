#include "cli/load_args.h"

#include <fmt/core.h>

#include <charconv>

#include "base/error.h"
#include "io/map_json.h"

namespace knod::cli {
namespace {

uint32_t parse_count(const std::string& arg, const std::string& text) {
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw Error(fmt::format("--max-entries '{}': want NAME=N or N (N a 32-bit count)", arg));
  return n;
}

}  // namespace

void parse_max_entries(const std::vector<std::string>& values, loader::LoadOptions& opts) {
  for (const std::string& v : values) {
    auto eq = v.find('=');
    if (eq == std::string::npos) {
      opts.default_max_entries = parse_count(v, v);
    } else {
      std::string name = v.substr(0, eq);
      if (name.empty()) throw Error(fmt::format("--max-entries '{}': map name missing", v));
      opts.max_entries[name] = parse_count(v, v.substr(eq + 1));
    }
  }
}

void check_max_entries_names(const std::vector<std::string>& values, const loader::Object& obj) {
  for (const std::string& v : values) {
    auto eq = v.find('=');
    if (eq != std::string::npos && obj.find_map(v.substr(0, eq)) < 0)
      throw Error(
          fmt::format("--max-entries '{}': {} has no map '{}'", v, obj.path, v.substr(0, eq)));
  }
}

void apply_map_loads(const std::vector<std::string>& specs, const loader::Object& obj) {
  for (const std::string& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      io::apply_map_preload(io::read_map_preload(spec), obj, spec);
      continue;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (name.empty() || file.empty())
      throw Error(fmt::format("--map-load '{}': want FILE.json or NAME=FILE.json", spec));
    io::MapPreload one;
    for (auto& e : io::read_map_preload(file))
      if (e.first == name) one.push_back(e);
    if (one.empty()) throw Error(fmt::format("{}: no entries for map '{}'", file, name));
    io::apply_map_preload(one, obj, file);
  }
}

}  // namespace knod::cli
