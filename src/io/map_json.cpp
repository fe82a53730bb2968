#include "io/map_json.h"

#include <fmt/core.h>
#include <linux/bpf.h>

#include <cctype>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "base/file.h"
#include "base/text.h"

namespace knod::io {
namespace {

bool is_per_cpu(uint32_t type) {
  return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
         type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

bool has_entries(uint32_t type) {
  return type != BPF_MAP_TYPE_RINGBUF && type != BPF_MAP_TYPE_PERF_EVENT_ARRAY &&
         type != BPF_MAP_TYPE_QUEUE && type != BPF_MAP_TYPE_STACK;
}

nlohmann::json hex_list(const uint8_t* p, size_t n) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) a.push_back(fmt::format("0x{:02x}", p[i]));
  return a;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::vector<uint8_t> parse_hex(const std::string& hex) {
  std::string digits;
  std::string_view s = hex;
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ':') continue;
    if (hex_digit(c) < 0)
      throw Error(
          fmt::format("bad hex digit '{}' in \"{}\"", printable({&c, 1}, 1), printable(hex, 80)));
    digits.push_back(c);
  }
  if (digits.size() % 2) throw Error(fmt::format("odd number of hex digits in \"{}\"", hex));
  std::vector<uint8_t> out(digits.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(hex_digit(digits[2 * i]) << 4 | hex_digit(digits[2 * i + 1]));
  return out;
}

MapPreload read_map_preload(const std::string& path) {
  const std::string text = read_file(path, "map file");
  nlohmann::json j;
  // JSON lets a name repeat in one object, and nlohmann keeps the last: a map named twice (or
  // an entry with two "key"s) would drop the first silently. Refused instead.
  std::vector<std::set<std::string>> names;
  std::string twice;
  auto no_repeats = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using Ev = nlohmann::json::parse_event_t;
    if (ev == Ev::object_start) names.emplace_back();
    if (ev == Ev::object_end && !names.empty()) names.pop_back();
    if (ev == Ev::key && !names.empty() && !names.back().insert(parsed.get<std::string>()).second &&
        twice.empty())
      twice = parsed.get<std::string>();
    return true;
  };
  try {
    j = nlohmann::json::parse(text, no_repeats);
  } catch (const nlohmann::json::exception& e) {  // parse_error; out_of_range: 1e999999
    throw Error(fmt::format("{}: malformed JSON: {}", path, e.what()));
  }
  if (!twice.empty())
    throw Error(fmt::format("{}: \"{}\" appears twice in one object (JSON keeps only the last)",
                            path, twice));
  if (!j.is_object() || !j.contains("maps") || !j["maps"].is_object())
    throw Error(fmt::format("{}: expected {{\"maps\": {{...}}}}", path));
  for (const auto& [k, v] : j.items())
    if (k != "maps")
      throw Error(fmt::format("{}: unknown key \"{}\" (a map file is {{\"maps\": {{...}}}})", path,
                              printable(k, 40)));
  MapPreload out;
  for (auto& [name, entries] : j["maps"].items()) {
    if (!entries.is_array())
      throw Error(fmt::format("{}: {}: expected a list of entries", path, name));
    std::vector<MapEntry> list;
    size_t i = 0;
    for (const auto& e : entries) {
      auto where = [&] { return fmt::format("{}: {}[{}]", path, name, i); };
      if (!e.is_object())
        throw Error(where() +
                    ": an entry is an object: {\"key\": \"<hex>\", \"value\": \"<hex>\"}");
      if (!e.contains("key") || !e["key"].is_string())
        throw Error(where() + ": needs \"key\": \"<hex>\"");
      MapEntry me;
      try {
        // A key knod does not know would be dropped silently: "flags": "BPF_NOEXIST" (an
        // update flag of bpf_map_update_elem, not a map file's), or "vlaue".
        for (const auto& [k, v] : e.items())
          if (k != "key" && k != "value" && k != "prog")
            throw Error(
                fmt::format("unknown key \"{}\" (an entry has \"key\" and \"value\", or "
                            "\"key\" and \"prog\")",
                            printable(k, 40)));
        me.key = parse_hex(e["key"].get<std::string>());
        if (e.contains("prog") && e.contains("value"))
          throw Error(
              "has both \"prog\" and \"value\" (PROG_ARRAY entries take \"prog\", other maps "
              "\"value\")");
        if (e.contains("prog") && e["prog"].is_string()) {
          me.prog = e["prog"].get<std::string>();
        } else if (e.contains("value") && e["value"].is_string()) {
          me.value = parse_hex(e["value"].get<std::string>());
        } else {
          throw Error("needs \"value\": \"<hex>\" or \"prog\": \"<name>\"");
        }
      } catch (const Error& err) {
        throw Error(where() + ": " + err.what());
      }
      list.push_back(std::move(me));
      ++i;
    }
    out.emplace_back(name, std::move(list));
  }
  return out;
}

void apply_map_preload(const MapPreload& preload, const loader::Object& obj,
                       const std::string& what) {
  for (const auto& [name, entries] : preload) {
    int idx = obj.find_map(name);
    if (idx < 0) throw Error(fmt::format("{}: no map named '{}' in {}", what, name, obj.path));
    maps::Map& m = *obj.maps[idx];
    const maps::MapDef& d = m.def();
    for (size_t i = 0; i < entries.size(); ++i) {
      const MapEntry& e = entries[i];
      std::vector<uint8_t> value = e.value;
      if (d.type == BPF_MAP_TYPE_PROG_ARRAY) {
        if (e.prog.empty())
          throw Error(fmt::format("{}: {}[{}]: PROG_ARRAY entries need \"prog\"", what, name, i));
        int p = -1;
        for (size_t k = 0; k < obj.programs.size(); ++k)
          if (obj.programs[k].name == e.prog) p = static_cast<int>(k);
        if (p < 0) throw Error(fmt::format("{}: {}[{}]: no program '{}'", what, name, i, e.prog));
        uint32_t v = static_cast<uint32_t>(p);
        value.assign(reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4);
      } else if (!e.prog.empty()) {
        throw Error(fmt::format("{}: {}[{}]: \"prog\" is only for PROG_ARRAY maps", what, name, i));
      }
      if (e.key.size() != d.key_size || value.size() != d.value_size)
        throw Error(fmt::format("{}: {}[{}]: key/value are {}/{} bytes, map wants {}/{}", what,
                                name, i, e.key.size(), value.size(), d.key_size, d.value_size));
      std::vector<uint8_t> user(m.user_value_size());
      if (is_per_cpu(d.type)) {
        size_t stride = (d.value_size + 7) / 8 * 8;
        for (size_t off = 0; off + d.value_size <= user.size(); off += stride)
          std::copy(value.begin(), value.end(), user.begin() + off);
      } else {
        user = value;
      }
      long err = m.user_update(e.key.data(), user.data(), BPF_ANY);
      if (err)  // as bpftool: "Argument list too long (E2BIG)"
        throw Error(fmt::format("{}: {}[{}]: update failed: {} ({})", what, name, i,
                                std::strerror(int(-err)), strerrorname_np(int(-err))));
    }
  }
}

std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> map_entries(maps::Map& m) {
  std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> out;
  if (!has_entries(m.def().type)) return out;
  std::vector<uint8_t> key(m.def().key_size), next(m.def().key_size), value(m.user_value_size());
  const void* prev = nullptr;
  // Bounded: a map never holds more than max_entries keys.
  for (uint64_t n = 0; n <= m.def().max_entries && m.get_next_key(prev, next.data()) == 0; ++n) {
    if (m.user_lookup(next.data(), value.data()) == 0) out.emplace_back(next, value);
    key = next;
    prev = key.data();
  }
  return out;
}

std::map<std::vector<uint8_t>, std::vector<uint8_t>> map_contents(maps::Map& m) {
  std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> e = map_entries(m);
  return {std::make_move_iterator(e.begin()), std::make_move_iterator(e.end())};
}

nlohmann::json dump_maps_json(const loader::Object& obj) {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < obj.maps.size(); ++i) {
    maps::Map& m = *obj.maps[i];
    const maps::MapDef& d = m.def();
    nlohmann::json jm = {{"name", m.name()},
                         {"type", d.type},
                         {"key_size", d.key_size},
                         {"value_size", d.value_size},
                         {"max_entries", d.max_entries}};
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [k, v] : map_entries(m)) {
      nlohmann::json e = {{"key", hex_list(k.data(), k.size())}};
      if (is_per_cpu(d.type)) {
        size_t stride = (d.value_size + 7) / 8 * 8;
        nlohmann::json vals = nlohmann::json::array();
        for (size_t off = 0, cpu = 0; off + d.value_size <= v.size(); off += stride, ++cpu)
          vals.push_back({{"cpu", cpu}, {"value", hex_list(v.data() + off, d.value_size)}});
        e["values"] = vals;
      } else {
        e["value"] = hex_list(v.data(), v.size());
      }
      entries.push_back(e);
    }
    jm["entries"] = entries;
    all.push_back(jm);
  }
  return all;
}

}  // namespace knod::io
