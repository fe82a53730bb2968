// Legacy SEC("maps") definitions: an array of `struct bpf_map_def { u32 type, key_size,
// value_size, max_entries, map_flags; }` (linux/bpf.h of old; iproute2 and old samples add
// fields after it). One symbol per map; the record size is section size / number of maps, as
// libbpf 0.x computed it. libbpf 1.x no longer reads these; knod does.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "loader/builder.h"

namespace knod::loader {

void collect_legacy_maps(Builder& b) {
  const ElfSection* sec = b.elf.find("maps");
  if (!sec) return;
  if (!sec->data) b.fail("SEC(\"maps\") has no data");
  std::vector<const ElfSymbol*> syms;
  for (const ElfSymbol& s : b.elf.symbols())
    if (s.sym.st_shndx == sec->index && s.type() != STT_SECTION && !s.name.empty())
      syms.push_back(&s);
  if (syms.empty()) return;
  std::sort(syms.begin(), syms.end(), [](const ElfSymbol* a, const ElfSymbol* c) {
    return a->sym.st_value < c->sym.st_value;
  });
  size_t rec = sec->size / syms.size();
  if (rec < 5 * sizeof(uint32_t) || sec->size % syms.size())
    b.fail(fmt::format("SEC(\"maps\"): {} bytes for {} maps is not an array of struct bpf_map_def",
                       sec->size, syms.size()));
  for (const ElfSymbol* s : syms) {
    if (s->sym.st_value % rec || s->sym.st_value + rec > sec->size)
      b.fail(fmt::format("SEC(\"maps\"): map '{}' at a bad offset {}", s->name, s->sym.st_value));
    uint32_t f[5];
    std::memcpy(f, sec->data + s->sym.st_value, sizeof f);
    MapSpec spec;
    spec.name = s->name;
    spec.def.type = f[0];
    spec.def.key_size = f[1];
    spec.def.value_size = f[2];
    spec.def.max_entries = f[3];
    spec.def.map_flags = f[4];
    spec.legacy = true;
    int idx = int(b.obj.map_specs.size());
    b.obj.map_specs.push_back(spec);
    b.map_syms.push_back({sec->index, s->sym.st_value, rec, idx});
  }
}

}  // namespace knod::loader
