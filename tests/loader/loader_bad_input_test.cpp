// Bad input: every malformed object gives one clear knod::Error line, never a crash.
#include <elf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "loader/object.h"

using namespace knod;
using namespace knod::loader;

namespace {

std::string obj_path(const char* name) {
  return std::string(KNOD_TEST_BPF_DIR) + "/" + name;
}

std::vector<char> read(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string error_of(const std::vector<char>& bytes) {
  try {
    LoadOptions o;
    o.ncpus = 2;
    load_object_mem(bytes.data(), bytes.size(), "x.o", o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LoaderBadInput, MissingFile) {
  try {
    load_object("/nonexistent/dir/prog.o");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/dir/prog.o: cannot open (No such file or directory)");
  }
}

TEST(LoaderBadInput, EmptyAndGarbage) {
  EXPECT_EQ(error_of({}), "x.o: empty file");
  EXPECT_EQ(error_of({'h', 'e', 'l', 'l', 'o'}), "x.o: not an ELF file");
  std::vector<char> elf32 = read(obj_path("calls.o"));
  elf32[4] = 1;  // ELFCLASS32
  EXPECT_EQ(error_of(elf32), "x.o: not a 64-bit ELF file (eBPF objects are ELF64)");
}

TEST(LoaderBadInput, WrongMachine) {
  // This test binary's own objects are x86-64 (or another host) ELF files.
  std::vector<char> self = read("/proc/self/exe");
  ASSERT_GT(self.size(), 64u);
  uint16_t machine;
  memcpy(&machine, self.data() + 18, 2);
  EXPECT_EQ(error_of(self), "x.o: not an eBPF object (e_machine " + std::to_string(machine) + ")");
#if defined(__x86_64__)
  EXPECT_EQ(machine, 62);
#endif
}

TEST(LoaderBadInput, NoPrograms) {
  // Drop the executable flag of every section: the object then has no programs.
  std::vector<char> b = read(obj_path("globals.o"));
  Elf64_Ehdr eh;
  memcpy(&eh, b.data(), sizeof eh);
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    memcpy(&sh, b.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    sh.sh_flags &= ~uint64_t(SHF_EXECINSTR);
    memcpy(b.data() + eh.e_shoff + i * sizeof sh, &sh, sizeof sh);
  }
  EXPECT_EQ(error_of(b), "x.o: no programs (no executable section other than .text)");
}

TEST(LoaderBadInput, TruncatedObjectsNeverCrash) {
  for (const char* f : {"calls.o", "globals.o", "maps_btf.o", "legacy_maps.o"}) {
    std::vector<char> full = read(obj_path(f));
    ASSERT_GT(full.size(), 1000u);
    size_t errors = 0, n = 0;
    for (size_t len = 0; len < full.size(); len += (len < 128 ? 7 : 97)) {
      std::vector<char> cut(full.begin(), full.begin() + len);
      std::string e = error_of(cut);
      ++n;
      if (!e.empty()) ++errors;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
    // The section headers sit at the end of clang's objects: every cut copy is refused.
    EXPECT_EQ(errors, n) << f;
    EXPECT_EQ(error_of(full), "") << f;
  }
}

TEST(LoaderBadInput, CorruptBytesNeverCrash) {
  // Flip bytes all over a real object; every outcome is a load or a knod::Error.
  std::vector<char> full = read(obj_path("maps_btf.o"));
  uint32_t seed = 12345;
  for (int round = 0; round < 300; ++round) {
    std::vector<char> b = full;
    for (int k = 0; k < 8; ++k) {
      seed = seed * 1103515245u + 12345u;
      b[(seed >> 8) % b.size()] ^= char(1 + (seed & 0x7f));
    }
    try {
      LoadOptions o;
      o.ncpus = 2;
      load_object_mem(b.data(), b.size(), "x.o", o);
    } catch (const Error&) {
    }
  }
  SUCCEED();
}

// A relocation moved onto the second slot of an ld_imm64 (its first slot's entry + 8): libbpf
// refuses the object ("relocation doesn't point to a valid instruction"); so does knod, rather
// than leave the first slot unrelocated to fault at run time.
TEST(LoaderBadInput, RelocationOnTheSecondSlotOfLdImm64) {
  std::vector<char> b = read(obj_path("globals.o"));
  ASSERT_GE(b.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  bool moved = false;
  for (int i = 0; i < eh.e_shnum && !moved; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, b.data() + eh.e_shoff + size_t(i) * eh.e_shentsize, sizeof sh);
    if (sh.sh_type != SHT_REL || sh.sh_size < sizeof(Elf64_Rel)) continue;
    Elf64_Shdr target;
    std::memcpy(&target, b.data() + eh.e_shoff + size_t(sh.sh_info) * eh.e_shentsize,
                sizeof target);
    if (!(target.sh_flags & SHF_EXECINSTR)) continue;
    Elf64_Rel r;
    std::memcpy(&r, b.data() + sh.sh_offset, sizeof r);
    const uint8_t code = uint8_t(b[target.sh_offset + r.r_offset]);
    ASSERT_EQ(code, BPF_LD | BPF_DW | BPF_IMM) << "the first relocation is not an ld_imm64's";
    r.r_offset += 8;
    std::memcpy(b.data() + sh.sh_offset, &r, sizeof r);
    moved = true;
  }
  ASSERT_TRUE(moved);
  EXPECT_NE(error_of(b).find("relocation on the second slot of an ld_imm64"), std::string::npos)
      << error_of(b);
}
