// Global variables: each .data*, .rodata*, .bss* section becomes a single-entry ARRAY map whose
// value is the section's bytes (libbpf's internal maps). .rodata* maps are BPF_F_RDONLY_PROG.
// Programs reach them by ld_imm64 BPF_PSEUDO_MAP_IDX_VALUE (imm = map, next imm = offset).
#include <bpf/btf.h>
#include <fmt/format.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cctype>

#include "loader/builder.h"

namespace knod::loader {

namespace {
bool has_prefix(const std::string& s, const std::string& p) {
  return s == p || s.rfind(p + ".", 0) == 0;
}

/// libbpf's internal_map_name() (tools/lib/bpf/libbpf.c): the object name (file name up to
/// its first '.') cut so that "<obj><section>" fits BPF_OBJ_NAME_LEN (16) with its NUL; no
/// prefix for a section with a second '.' (".rodata.str1.1"); characters the kernel refuses
/// in map names become '_'.
std::string internal_map_name(const std::string& path, const std::string& section) {
  std::string obj = path.substr(path.find_last_of('/') + 1);
  obj = obj.substr(0, obj.find('.'));
  const size_t sfx = std::max<size_t>(7, section.size());
  const size_t pfx = section.find('.', 1) != std::string::npos || sfx + 1 >= BPF_OBJ_NAME_LEN
                         ? 0
                         : std::min<size_t>(BPF_OBJ_NAME_LEN - sfx - 1, obj.size());
  std::string name = (obj.substr(0, pfx) + section).substr(0, BPF_OBJ_NAME_LEN - 1);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
  return name;
}
}  // namespace

void collect_data_maps(Builder& b) {
  for (const ElfSection& s : b.elf.sections()) {
    if (!s.index || s.exec() || !(s.hdr.sh_flags & SHF_ALLOC) || s.size == 0) continue;
    bool ro = has_prefix(s.name, ".rodata");
    bool data = has_prefix(s.name, ".data");
    bool bss = has_prefix(s.name, ".bss");
    if (!ro && !data && !bss) continue;
    if (s.size > (1u << 30)) b.fail(fmt::format("section '{}' is too large", s.name));
    MapSpec spec;
    spec.name = internal_map_name(b.obj.path, s.name);
    spec.real_name = s.name;
    spec.def.type = BPF_MAP_TYPE_ARRAY;
    spec.def.key_size = 4;
    spec.def.value_size = uint32_t(s.size);
    spec.def.max_entries = 1;
    spec.def.map_flags = BPF_F_MMAPABLE | (ro ? BPF_F_RDONLY_PROG : 0);
    if (s.data)
      spec.init.assign(s.data, s.data + s.size);
    else
      spec.init.assign(s.size, 0);
    if (b.btf) {
      int id = btf__find_by_name_kind(b.btf, s.name.c_str(), BTF_KIND_DATASEC);
      if (id > 0) spec.btf_value_type_id = uint32_t(id);
    }
    b.data_maps[s.index] = int(b.obj.map_specs.size());
    b.obj.map_specs.push_back(std::move(spec));
  }
}

}  // namespace knod::loader
