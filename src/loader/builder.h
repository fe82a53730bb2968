// Internal state while an object is read: the ELF tables, the BTF, and where each map lives.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loader/elf_file.h"
#include "loader/object.h"

namespace knod::loader {

/// A map's definition bytes in the ELF: [off, off + size) of section `sec`.
struct MapSym {
  size_t sec;
  uint64_t off, size;
  int map;
};

struct Builder {
  const ElfFile& elf;
  std::string what;  ///< file name for errors
  struct btf* btf = nullptr;
  Object& obj;
  std::vector<MapSym> map_syms;
  std::map<size_t, int> data_maps;  ///< section index -> map index (.data, .rodata, .bss)
  /// `values` initialisers from .rel.maps: (outer map, slot, symbol index)
  struct InitRef {
    int map;
    uint32_t slot;
    uint32_t sym;
  };
  std::vector<InitRef> init_refs;

  [[noreturn]] void fail(const std::string& why) const;
  int map_at(size_t sec, uint64_t off) const;  ///< map whose definition covers off, or -1
};

void collect_btf_maps(Builder& b);     // btf_maps.cpp
void collect_legacy_maps(Builder& b);  // legacy_maps.cpp
void collect_data_maps(Builder& b);    // data_maps.cpp
void collect_programs(Builder& b);     // programs.cpp (also links and relocates)
void resolve_init_refs(Builder& b);    // btf_maps.cpp

}  // namespace knod::loader
