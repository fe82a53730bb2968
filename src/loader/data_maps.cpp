// Global variables: each .data*, .rodata*, .bss* section becomes a single-entry ARRAY map whose
// value is the section's bytes (libbpf's internal maps). .rodata* maps are BPF_F_RDONLY_PROG.
// Programs reach them by ld_imm64 BPF_PSEUDO_MAP_IDX_VALUE (imm = map, next imm = offset).
#include <bpf/btf.h>
#include <fmt/format.h>
#include <linux/bpf.h>

#include "loader/builder.h"

namespace knod::loader {

namespace {
bool has_prefix(const std::string& s, const std::string& p) {
  return s == p || s.rfind(p + ".", 0) == 0;
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
    spec.name = s.name;
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
