#include "loader/elf_file.h"

#include <fmt/format.h>
#include <libelf.h>

#include <cstring>
#include <memory>

#include "base/error.h"

namespace knod::loader {

namespace {
struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
}  // namespace

ElfFile::ElfFile(const std::vector<uint8_t>& bytes, const std::string& what) : what_(what) {
  auto fail = [&](const std::string& why) { throw Error(fmt::format("{}: {}", what_, why)); };
  if (bytes.empty()) fail("empty file");
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    fail("not an ELF file");
  if (bytes.size() < sizeof(Elf64_Ehdr))
    fail(fmt::format("truncated ELF header ({} bytes, ELF64 needs {})", bytes.size(),
                     sizeof(Elf64_Ehdr)));
  if (bytes[EI_CLASS] != ELFCLASS64) fail("not a 64-bit ELF file (eBPF objects are ELF64)");
  if (bytes[EI_DATA] != ELFDATA2LSB)
    fail("big-endian ELF; only little-endian eBPF objects are supported");
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_machine != EM_BPF) fail(fmt::format("not an eBPF object (e_machine {})", eh.e_machine));
  if (eh.e_type != ET_REL) fail(fmt::format("not a relocatable object (e_type {})", eh.e_type));
  // Check the section header table ourselves before libelf walks it.
  if (eh.e_shentsize != sizeof(Elf64_Shdr) && eh.e_shnum) fail("bad section header size");
  if (eh.e_shoff > bytes.size() ||
      uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > bytes.size() - eh.e_shoff)
    fail("truncated or corrupt ELF: section headers lie past the end of the file");
  if (eh.e_shnum == 0) fail("no sections");

  elf_version(EV_CURRENT);
  std::unique_ptr<Elf, ElfCloser> elf(
      elf_memory(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), bytes.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    fail(fmt::format("not an ELF file ({})", elf_errmsg(-1)));
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf.get(), &shstrndx) != 0) fail("corrupt ELF: no section name table");

  size_t nsec = 0;
  if (elf_getshdrnum(elf.get(), &nsec) != 0 || nsec > 65535) fail("corrupt ELF: section count");
  sections_.resize(nsec);
  rels_.resize(nsec);
  for (size_t i = 0; i < nsec; ++i) {
    ElfSection& s = sections_[i];
    s.index = i;
    Elf_Scn* scn = elf_getscn(elf.get(), i);
    if (!scn || !gelf_getshdr(scn, &s.hdr)) fail(fmt::format("corrupt ELF: section {}", i));
    if (i == 0) continue;
    const char* n = elf_strptr(elf.get(), shstrndx, s.hdr.sh_name);
    if (!n) fail(fmt::format("corrupt ELF: name of section {}", i));
    s.name = n;
    s.size = s.hdr.sh_size;
    if (s.hdr.sh_type != SHT_NOBITS) {
      if (s.hdr.sh_offset > bytes.size() || s.hdr.sh_size > bytes.size() - s.hdr.sh_offset)
        fail(fmt::format("truncated or corrupt ELF: section '{}' lies past the end of the file",
                         s.name));
      s.data = bytes.data() + s.hdr.sh_offset;
    }
  }

  for (size_t i = 1; i < nsec; ++i) {
    const ElfSection& s = sections_[i];
    if (s.hdr.sh_type != SHT_SYMTAB && s.hdr.sh_type != SHT_REL) continue;
    Elf_Data* d = elf_getdata(elf_getscn(elf.get(), i), nullptr);
    if (!d) fail(fmt::format("corrupt ELF: section '{}' ({})", s.name, elf_errmsg(-1)));
    if (s.hdr.sh_type == SHT_SYMTAB) {
      if (s.hdr.sh_link >= nsec) fail("corrupt ELF: symbol string table");
      size_t n = s.hdr.sh_entsize ? s.size / s.hdr.sh_entsize : 0;
      symbols_.resize(n);
      for (size_t k = 0; k < n; ++k) {
        if (!gelf_getsym(d, int(k), &symbols_[k].sym)) fail("corrupt ELF: symbol table");
        const char* sn = elf_strptr(elf.get(), s.hdr.sh_link, symbols_[k].sym.st_name);
        if (!sn) fail("corrupt ELF: symbol name");
        symbols_[k].name = sn;
      }
    } else {
      if (s.hdr.sh_info >= nsec) fail(fmt::format("corrupt ELF: relocation section '{}'", s.name));
      size_t n = s.hdr.sh_entsize ? s.size / s.hdr.sh_entsize : 0;
      auto& out = rels_[s.hdr.sh_info];
      for (size_t k = 0; k < n; ++k) {
        GElf_Rel r;
        if (!gelf_getrel(d, int(k), &r)) fail("corrupt ELF: relocation table");
        out.push_back(
            {r.r_offset, uint32_t(GELF_R_SYM(r.r_info)), uint32_t(GELF_R_TYPE(r.r_info))});
      }
    }
  }
  for (auto& list : rels_)
    for (const ElfRel& r : list)
      if (r.sym >= symbols_.size()) fail("corrupt ELF: relocation names a missing symbol");
  for (const ElfSymbol& s : symbols_)
    if (s.sym.st_shndx != SHN_UNDEF && s.sym.st_shndx < SHN_LORESERVE && s.sym.st_shndx >= nsec)
      fail(fmt::format("corrupt ELF: symbol '{}' in a missing section", s.name));
}

const ElfSection* ElfFile::find(const std::string& name) const {
  for (const ElfSection& s : sections_)
    if (s.index && s.name == name) return &s;
  return nullptr;
}

const std::vector<ElfRel>& ElfFile::rels(size_t target) const {
  static const std::vector<ElfRel> none;
  return target < rels_.size() ? rels_[target] : none;
}

}  // namespace knod::loader
