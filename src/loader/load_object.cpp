// load_object(): read the ELF, collect maps (legacy SEC("maps"), BTF .maps, global data),
// link programs, resolve max_entries, create and initialise the maps.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "base/error.h"
#include "loader/builder.h"
#include "maps/array.h"
#include "maps/map_in_map.h"

namespace knod::loader {

void Builder::fail(const std::string& why) const {
  throw Error(fmt::format("{}: {}", what, why));
}

int Builder::map_at(size_t sec, uint64_t off) const {
  for (const MapSym& m : map_syms)
    if (m.sec == sec && off >= m.off && off < m.off + m.size) return m.map;
  return -1;
}

namespace {

std::string section_string(const ElfFile& elf, const char* name) {
  const ElfSection* s = elf.find(name);
  if (!s || !s->data) return "";
  size_t n = 0;
  while (n < s->size && s->data[n]) ++n;
  return std::string(reinterpret_cast<const char*>(s->data), n);
}

/// libbpf's adjust_ringbuf_sz(): a RINGBUF size that is not a power-of-2 multiple of the page
/// size becomes the smallest one above it (5000 → 8192 with 4 KiB pages).
uint32_t adjust_ringbuf_size(uint32_t sz) {
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  if (sz == 0 || (sz % page == 0 && std::has_single_bit(sz / page))) return sz;
  for (uint64_t mul = 1; mul * page <= UINT32_MAX; mul <<= 1)
    if (mul * page > sz) return uint32_t(mul * page);
  return sz;  // the map's own check refuses it
}

uint32_t resolve_max_entries(const Builder& b, const MapSpec& s, const LoadOptions& opts,
                             uint32_t ncpus) {
  auto fit = [&](uint32_t n) {
    return s.def.type == BPF_MAP_TYPE_RINGBUF ? adjust_ringbuf_size(n) : n;
  };
  auto o = opts.max_entries.find(s.name);
  if (o != opts.max_entries.end()) return fit(o->second);
  if (s.def.max_entries) return fit(s.def.max_entries);
  if (opts.default_max_entries) return fit(opts.default_max_entries);
  // libbpf sizes only this type itself (bpf_object__create_map); a CPUMAP of 0 entries is
  // refused by the kernel.
  if (s.def.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY) return ncpus;
  b.fail(
      fmt::format("map '{}' declares max_entries 0 (sized at load time); give its size "
                  "with --max-entries {}=N",
                  s.name, s.name));
}

void create_maps(Builder& b, const LoadOptions& opts, uint32_t ncpus) {
  Object& obj = b.obj;
  for (MapSpec& s : obj.map_specs) s.def.max_entries = resolve_max_entries(b, s, opts, ncpus);
  for (MapSpec& s : obj.map_specs) {
    try {
      obj.maps.push_back(maps::create_map(s.name, s.def, ncpus));
    } catch (const Error& e) {
      b.fail(e.what());  // names the object file
    }
  }
  std::vector<std::weak_ptr<maps::Map>> weak(obj.maps.begin(), obj.maps.end());
  for (size_t i = 0; i < obj.map_specs.size(); ++i) {
    const MapSpec& s = obj.map_specs[i];
    if (!s.init.empty()) {
      uint32_t zero = 0;
      if (long e = obj.maps[i]->user_update(&zero, s.init.data(), BPF_ANY))
        b.fail(fmt::format("map '{}': initial value rejected ({})", s.name, e));
    }
    if (auto* mm = dynamic_cast<maps::MapOfMaps*>(obj.maps[i].get())) {
      if (s.def.inner_map < 0 || size_t(s.def.inner_map) >= obj.map_specs.size())
        b.fail(fmt::format("map '{}': map-in-map without an inner map definition", s.name));
      mm->set_inner(obj.map_specs[s.def.inner_map].def, [weak](uint32_t id) -> maps::MapPtr {
        return id < weak.size() ? weak[id].lock() : nullptr;
      });
    }
    for (auto [slot, value] : s.init_values)
      if (long e = obj.maps[i]->user_update(&slot, &value, BPF_ANY))
        b.fail(fmt::format("map '{}': initial slot {} rejected ({})", s.name, slot, e));
  }
}

}  // namespace

Object load_object_mem(const void* data, size_t size, const std::string& name,
                       const LoadOptions& opts) {
  std::vector<uint8_t> bytes(static_cast<const uint8_t*>(data),
                             static_cast<const uint8_t*>(data) + size);
  ElfFile elf(bytes, name);
  Object obj;
  obj.path = name;
  Builder b{elf, name, nullptr, obj, {}, {}, {}};
  if (const ElfSection* s = elf.find(".BTF"); s && s->data) {
    // Quietly: a malformed .BTF is reported by what later needs it (e.g. SEC(".maps")).
    libbpf_print_fn_t old = libbpf_set_print(nullptr);
    struct btf* btf = btf__new(s->data, uint32_t(std::min<size_t>(s->size, UINT32_MAX)));
    libbpf_set_print(old);
    if (btf) {  // libbpf 1.x: NULL and errno on error
      obj.btf = std::shared_ptr<struct btf>(btf, btf__free);
      b.btf = btf;
    }
  }
  obj.license = section_string(elf, "license");
  collect_legacy_maps(b);
  collect_btf_maps(b);
  collect_data_maps(b);
  collect_programs(b);
  resolve_init_refs(b);
  uint32_t ncpus = opts.ncpus ? opts.ncpus : std::max(1u, std::thread::hardware_concurrency());
  create_maps(b, opts, ncpus);
  return obj;
}

Object load_object(const std::string& path, const LoadOptions& opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a directory, not an eBPF object", path));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error(fmt::format("{}: read error", path));
  return load_object_mem(bytes.data(), bytes.size(), path, opts);
}

const ProgramSpec* Object::find_program(const std::string& name_or_section) const {
  for (const ProgramSpec& p : programs)
    if (p.name == name_or_section) return &p;
  for (const ProgramSpec& p : programs)
    if (p.section == name_or_section) return &p;
  return nullptr;
}

int Object::find_map(const std::string& name) const {
  for (size_t i = 0; i < map_specs.size(); ++i)
    if (map_specs[i].name == name || map_specs[i].real_name == name) return int(i);
  return -1;
}

}  // namespace knod::loader
