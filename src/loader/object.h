// knod loader: an eBPF ELF object (clang -target bpf) opened without a kernel.
// Uses libbpf's ELF/BTF parsing; legacy SEC("maps") is parsed here (libbpf 1.x refuses it).
// Source: libbpf docs (program sections), kernel Documentation/bpf/llvm_reloc.rst.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "maps/map.h"

struct btf;

namespace knod::loader {

/// A program of the object, linked: its own text followed by every subprogram it reaches
/// (bpf-to-bpf calls and callbacks re-targeted to the copies, as libbpf does). Map
/// references are ld_imm64 with src_reg BPF_PSEUDO_MAP_IDX (imm = index into Object::maps)
/// or BPF_PSEUDO_MAP_IDX_VALUE (imm = index, next imm = byte offset into the value).
/// Helper calls keep their helper id in imm.
struct ProgramSpec {
  std::string name;        ///< function name (bpftool prog name)
  std::string section;     ///< ELF section, e.g. "xdp", "xdp/foo", "classifier"
  uint32_t prog_type = 0;  ///< enum bpf_prog_type guessed from the section as libbpf does
  InsnVec insns;
  uint32_t expected_attach_type = 0;  ///< enum bpf_attach_type from the section (libbpf)
  uint32_t prog_flags = 0;            ///< BPF_F_XDP_HAS_FRAGS for "xdp.frags*" sections
};

/// A map of the object with its resolved definition.
struct MapSpec {
  /// The map's name; for .data/.rodata/.bss maps libbpf's internal_map_name(): up to 8 bytes
  /// of the object's file name, then the section (`vlan.rodata`, as bpftool shows it).
  std::string name;
  std::string real_name;  ///< internal maps: the ELF section (".rodata"), also found by name
  maps::MapDef def;
  std::vector<uint8_t> init;  ///< initial value bytes for .data/.rodata/.bss (else empty)
  bool legacy = false;        ///< from SEC("maps") struct bpf_map_def
  uint32_t btf_key_type_id = 0, btf_value_type_id = 0;
  /// Initial slots from a BTF `values = { [i] = &x }` initialiser: (key, index into
  /// Object::maps) for map-in-map, (key, index into Object::programs) for PROG_ARRAY.
  std::vector<std::pair<uint32_t, uint32_t>> init_values;
  bool inner_template = false;  ///< the inner map definition of a map-in-map ("outer.inner")
};

struct LoadOptions {
  uint32_t ncpus = 0;  ///< per-CPU slots; 0 = std::thread::hardware_concurrency()
  /// max_entries for maps declared with 0 (libbpf skeletons size them at load time). 0 = the
  /// skeleton convention: ncpus for PERF_EVENT_ARRAY (as libbpf), else error. RINGBUF sizes
  /// are rounded up to a power-of-2 multiple of the page size, as libbpf's adjust_ringbuf_sz.
  uint32_t default_max_entries = 0;
  /// Per-map max_entries by map name; wins over the object's own value.
  std::map<std::string, uint32_t> max_entries;
};

/// An opened object: programs, map specs and live maps (created and initialised).
struct Object {
  std::string path;
  std::string license;  ///< SEC("license") text, "" when the object has none
  std::vector<ProgramSpec> programs;
  std::vector<MapSpec> map_specs;
  std::vector<maps::MapPtr> maps;   ///< same order as map_specs
  std::shared_ptr<struct btf> btf;  ///< may be null (no .BTF section)

  const ProgramSpec* find_program(const std::string& name_or_section) const;
  /// Index of the map called `name` (or whose real_name is `name`, as libbpf's
  /// bpf_object__find_map_by_name), or -1.
  int find_map(const std::string& name) const;
  /// The kernel's license_is_gpl_compatible() (include/linux/license.h): "GPL", "GPL v2",
  /// "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL". A program
  /// of an object that is not may not call a GPL-only helper (vm::HelperTable::gpl_only).
  bool gpl_compatible() const {
    for (const char* l : {"GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL",
                          "Dual MIT/GPL", "Dual MPL/GPL"})
      if (license == l) return true;
    return false;
  }
};

/// Opens and links `path`. Throws knod::Error naming the problem: unreadable or non-ELF file,
/// wrong machine (not EM_BPF), missing section, unknown helper id or kfunc (named), bad
/// relocation, unsupported map type.
Object load_object(const std::string& path, const LoadOptions& opts = {});
/// Same, from bytes in memory; `name` stands for the path in errors and Object::path.
Object load_object_mem(const void* data, size_t size, const std::string& name,
                       const LoadOptions& opts = {});

}  // namespace knod::loader
