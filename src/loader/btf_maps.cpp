// Maps declared in SEC(".maps") with BTF, as libbpf's parse_btf_map_def() reads them:
// `__uint(type, T)` is `int (*type)[T]`, `__type(key, K)` is `K *key`, `__array(values, S)` is
// `S *values[]` (map-in-map inner definition, or PROG_ARRAY program slots).
#include <bpf/btf.h>
#include <fmt/format.h>
#include <linux/bpf.h>

#include "loader/builder.h"

namespace knod::loader {

namespace {

std::string cstr(const char* s) {
  return s ? s : "";
}

const btf_type* skip_mods(const struct btf* btf, uint32_t id, uint32_t* out_id = nullptr) {
  const btf_type* t = btf__type_by_id(btf, id);
  for (int guard = 0; t && (btf_is_mod(t) || btf_is_typedef(t)) && guard < 64; ++guard) {
    id = t->type;
    t = btf__type_by_id(btf, id);
  }
  if (out_id) *out_id = id;
  return t;
}

struct Parsed {
  maps::MapDef def;
  uint32_t key_id = 0, value_id = 0;
  bool has_values = false;
  uint32_t values_off = 0;          // byte offset of `values` in the definition struct
  const btf_type* inner = nullptr;  // inner struct definition (map-in-map)
};

Parsed parse_def(Builder& b, const std::string& name, const btf_type* st) {
  const struct btf* btf = b.btf;
  Parsed p;
  if (!st || !btf_is_struct(st))
    b.fail(fmt::format("map '{}': BTF definition is not a struct", name));
  const btf_member* m = btf_members(st);
  for (int i = 0; i < btf_vlen(st); ++i, ++m) {
    std::string f = cstr(btf__name_by_offset(btf, m->name_off));
    const btf_type* mt = skip_mods(btf, m->type);
    auto int_field = [&]() -> uint32_t {
      if (!mt || !btf_is_ptr(mt))
        b.fail(fmt::format("map '{}': field '{}' is not __uint()", name, f));
      const btf_type* arr = skip_mods(btf, mt->type);
      if (!arr || !btf_is_array(arr))
        b.fail(fmt::format("map '{}': field '{}' is not __uint()", name, f));
      return btf_array(arr)->nelems;
    };
    auto type_field = [&](uint32_t* id) -> uint32_t {
      if (!mt || !btf_is_ptr(mt))
        b.fail(fmt::format("map '{}': field '{}' is not __type()", name, f));
      long sz = btf__resolve_size(btf, mt->type);
      if (sz < 0) b.fail(fmt::format("map '{}': cannot size the type of '{}'", name, f));
      *id = mt->type;
      return uint32_t(sz);
    };
    // libbpf: __uint(key_size, N) and __type(key, T) (value likewise) must agree.
    auto sized = [&](uint32_t had, uint32_t sz, const char* what) {
      if (had && had != sz)
        b.fail(fmt::format("map '{}': conflicting {} size {} != {}", name, what, had, sz));
      return sz;
    };
    if (f == "type") {
      p.def.type = int_field();
    } else if (f == "max_entries") {
      p.def.max_entries = int_field();
    } else if (f == "map_flags") {
      p.def.map_flags = int_field();
    } else if (f == "key_size") {
      p.def.key_size = sized(p.def.key_size, int_field(), "key");
    } else if (f == "value_size") {
      p.def.value_size = sized(p.def.value_size, int_field(), "value");
    } else if (f == "pinning") {  // LIBBPF_PIN_NONE or LIBBPF_PIN_BY_NAME
      if (uint32_t v = int_field(); v > 1)
        b.fail(fmt::format("map '{}': invalid pinning value {}", name, v));
    } else if (f == "numa_node" || f == "map_extra") {
      int_field();
    } else if (f == "key") {
      p.def.key_size = sized(p.def.key_size, type_field(&p.key_id), "key");
    } else if (f == "value") {
      p.def.value_size = sized(p.def.value_size, type_field(&p.value_id), "value");
    } else if (f == "values") {
      // `S *values[N]`: an array of pointers.
      if (!mt || !btf_is_array(mt)) b.fail(fmt::format("map '{}': 'values' is not an array", name));
      const btf_type* pt = skip_mods(btf, btf_array(mt)->type);
      if (!pt || !btf_is_ptr(pt)) b.fail(fmt::format("map '{}': 'values' is not __array()", name));
      p.has_values = true;
      p.values_off = btf_member_bit_offset(st, i) / 8;
      const btf_type* target = skip_mods(btf, pt->type);
      if (target && btf_is_struct(target)) p.inner = target;
      p.def.value_size = 4;  // map id or program index
    } else {
      b.fail(fmt::format("map '{}': unknown field '{}' in the BTF map definition", name, f));
    }
  }
  return p;
}

/// Byte offset of the `struct bpf_spin_lock` member of value type `id`, or -1 (the kernel's
/// btf_parse_fields: top-level members of a struct value).
int32_t spin_lock_offset(Builder& b, const std::string& name, uint32_t id) {
  const btf_type* t = id ? skip_mods(b.btf, id) : nullptr;
  if (!t || !btf_is_struct(t)) return -1;
  int32_t off = -1;
  const btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++m) {
    const btf_type* mt = skip_mods(b.btf, m->type);
    if (!mt || !btf_is_struct(mt) ||
        cstr(btf__name_by_offset(b.btf, mt->name_off)) != "bpf_spin_lock")
      continue;
    if (off >= 0) b.fail(fmt::format("map '{}': more than one bpf_spin_lock in the value", name));
    off = int32_t(btf_member_bit_offset(t, i) / 8);
  }
  return off;
}

}  // namespace

void collect_btf_maps(Builder& b) {
  const ElfSection* sec = b.elf.find(".maps");
  if (!sec) return;
  if (!b.btf) b.fail("SEC(\".maps\") needs BTF, but the object has no usable .BTF section");
  int dsid = btf__find_by_name_kind(b.btf, ".maps", BTF_KIND_DATASEC);
  if (dsid < 0) b.fail("no BTF DATASEC for SEC(\".maps\")");
  const btf_type* ds = btf__type_by_id(b.btf, dsid);
  std::vector<std::pair<int, Parsed>> inners;
  for (const ElfSymbol& s : b.elf.symbols()) {
    if (s.sym.st_shndx != sec->index || s.type() == STT_SECTION) continue;
    if (s.sym.st_value >= sec->size) b.fail(fmt::format("map '{}': symbol outside .maps", s.name));
    // Find the BTF VAR of this name.
    const btf_var_secinfo* vs = btf_var_secinfos(ds);
    const btf_type* var = nullptr;
    for (int i = 0; i < btf_vlen(ds); ++i, ++vs) {
      const btf_type* v = btf__type_by_id(b.btf, vs->type);
      if (v && btf_is_var(v) && s.name == cstr(btf__name_by_offset(b.btf, v->name_off))) var = v;
    }
    if (!var) b.fail(fmt::format("map '{}': no BTF variable in DATASEC .maps", s.name));
    Parsed p = parse_def(b, s.name, skip_mods(b.btf, var->type));
    MapSpec spec;
    spec.name = s.name;
    spec.def = p.def;
    spec.def.spin_lock_off = spin_lock_offset(b, s.name, p.value_id);
    spec.btf_key_type_id = p.key_id;
    spec.btf_value_type_id = p.value_id;
    int idx = int(b.obj.map_specs.size());
    b.obj.map_specs.push_back(spec);
    uint64_t size = s.sym.st_size ? s.sym.st_size : 1;
    b.map_syms.push_back({sec->index, s.sym.st_value, size, idx});
    bool mim = p.def.type == BPF_MAP_TYPE_ARRAY_OF_MAPS || p.def.type == BPF_MAP_TYPE_HASH_OF_MAPS;
    if (mim && !p.inner)
      b.fail(fmt::format("map '{}': map-in-map needs an inner definition (__array(values, ...))",
                         s.name));
    if (mim) inners.push_back({idx, p});
    // `values` initialisers are relocations in .rel.maps at values_off + 8 * slot.
    if (p.has_values)
      for (const ElfRel& r : b.elf.rels(sec->index)) {
        uint64_t lo = s.sym.st_value + p.values_off;
        if (r.offset < lo || r.offset >= s.sym.st_value + size) continue;
        if ((r.offset - lo) % 8) b.fail(fmt::format("map '{}': misaligned 'values' slot", s.name));
        b.init_refs.push_back({idx, uint32_t((r.offset - lo) / 8), r.sym});
      }
  }
  for (auto& [outer, p] : inners) {
    std::string iname = b.obj.map_specs[outer].name + ".inner";
    Parsed ip = parse_def(b, iname, p.inner);
    if (ip.inner) b.fail(fmt::format("map '{}': nested map-in-map is not supported", iname));
    MapSpec spec;
    spec.name = iname;
    spec.def = ip.def;
    spec.def.spin_lock_off = spin_lock_offset(b, iname, ip.value_id);
    spec.btf_key_type_id = ip.key_id;
    spec.btf_value_type_id = ip.value_id;
    spec.inner_template = true;
    b.obj.map_specs[outer].def.inner_map = int32_t(b.obj.map_specs.size());
    b.obj.map_specs.push_back(spec);
  }
}

void resolve_init_refs(Builder& b) {
  for (const Builder::InitRef& r : b.init_refs) {
    const ElfSymbol& s = b.elf.symbols()[r.sym];
    MapSpec& outer = b.obj.map_specs[r.map];
    uint32_t value;
    if (outer.def.type == BPF_MAP_TYPE_PROG_ARRAY) {
      int found = -1;
      for (size_t i = 0; i < b.obj.programs.size(); ++i)
        if (b.obj.programs[i].name == s.name) found = int(i);
      if (found < 0)
        b.fail(fmt::format("map '{}': initial value '{}' is not a program", outer.name, s.name));
      value = uint32_t(found);
    } else {
      int m =
          s.sym.st_shndx < b.elf.sections().size() ? b.map_at(s.sym.st_shndx, s.sym.st_value) : -1;
      if (m < 0)
        b.fail(fmt::format("map '{}': initial value '{}' is not a map", outer.name, s.name));
      value = uint32_t(m);
    }
    if (r.slot >= outer.def.max_entries && outer.def.max_entries)
      b.fail(fmt::format("map '{}': initial slot {} past max_entries", outer.name, r.slot));
    outer.init_values.push_back({r.slot, value});
  }
}

}  // namespace knod::loader
