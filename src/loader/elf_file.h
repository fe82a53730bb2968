// A BPF ELF object read with libelf into plain, bounds-checked tables: sections (with their
// bytes), symbols, and REL relocations. Every offset in the file is checked against its size
// before use, so truncated or corrupt objects give a knod::Error, never a bad read.
#pragma once

#include <gelf.h>

#include <cstdint>
#include <string>
#include <vector>

namespace knod::loader {

struct ElfSection {
  size_t index = 0;
  std::string name;
  GElf_Shdr hdr{};
  const uint8_t* data = nullptr;  ///< nullptr for SHT_NOBITS (.bss)
  size_t size = 0;                ///< bytes (sh_size, also for NOBITS)
  bool exec() const { return hdr.sh_type == SHT_PROGBITS && (hdr.sh_flags & SHF_EXECINSTR); }
};

struct ElfSymbol {
  std::string name;
  GElf_Sym sym{};
  uint8_t type() const { return GELF_ST_TYPE(sym.st_info); }
  uint8_t bind() const { return GELF_ST_BIND(sym.st_info); }
};

struct ElfRel {
  uint64_t offset;  ///< r_offset: byte offset in the target section
  uint32_t sym;     ///< symbol index
  uint32_t type;    ///< R_BPF_*
};

class ElfFile {
 public:
  /// Parses `bytes` (kept alive by the caller for the ElfFile's life). `what` names the file in
  /// errors. Throws knod::Error: empty, not ELF, not 64-bit little-endian, not EM_BPF, corrupt.
  ElfFile(const std::vector<uint8_t>& bytes, const std::string& what);

  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  const ElfSection* find(const std::string& name) const;
  /// Relocations whose target is section `target` (from SHT_REL sections with sh_info = target).
  const std::vector<ElfRel>& rels(size_t target) const;

 private:
  std::string what_;
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
  std::vector<std::vector<ElfRel>> rels_;
};

}  // namespace knod::loader
