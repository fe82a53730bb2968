// Differential test: knod's linked programs against what libbpf 1.1 hands the kernel.
// libbpf opens and loads the same object (we run as root); after bpf_object__load()
// bpf_program__insns() holds the final instructions with map fds in ld_imm64. Every
// instruction must be equal, except that knod's BPF_PSEUDO_MAP_IDX[_VALUE] index must name
// the same map as libbpf's BPF_PSEUDO_MAP_FD / BPF_PSEUDO_MAP_VALUE fd.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "loader/object.h"

using namespace knod;

namespace {

std::string obj_path(const char* name) {
  return std::string(KNOD_TEST_BPF_DIR) + "/" + name;
}

void compare_with_libbpf(const char* file) {
  std::string path = obj_path(file);
  bpf_object* bo = bpf_object__open_file(path.c_str(), nullptr);
  ASSERT_TRUE(bo) << "libbpf cannot open " << path;
  {  // map names as libbpf gives them (bpftool shows them): "globals.rodata", not ".rodata"
    loader::LoadOptions names_opts;
    names_opts.ncpus = 1;
    loader::Object o = loader::load_object(path, names_opts);
    bpf_map* m;
    size_t n = 0;
    bpf_object__for_each_map(m, bo) {
      ++n;
      const int idx = o.find_map(bpf_map__name(m));
      ASSERT_GE(idx, 0) << bpf_map__name(m);
      EXPECT_EQ(o.map_specs[size_t(idx)].name, bpf_map__name(m));
    }
    size_t mine = 0;
    for (const auto& spec : o.map_specs) mine += spec.inner_template ? 0 : 1;
    EXPECT_EQ(mine, n);
  }
  if (bpf_object__load(bo) != 0) {
    bpf_object__close(bo);
    GTEST_SKIP() << "libbpf could not load " << file
                 << " into this kernel (needs root and bpf()); no oracle";
  }
  std::map<int, std::string> fd_name;
  bpf_map* m;
  bpf_object__for_each_map(m, bo) fd_name[bpf_map__fd(m)] = bpf_map__name(m);

  loader::LoadOptions opts;
  opts.ncpus = uint32_t(libbpf_num_possible_cpus());
  loader::Object o = loader::load_object(path, opts);
  bpf_program* prog;
  size_t nprogs = 0;
  bpf_object__for_each_program(prog, bo) {
    ++nprogs;
    const loader::ProgramSpec* mine = o.find_program(bpf_program__name(prog));
    ASSERT_TRUE(mine) << bpf_program__name(prog);
    EXPECT_EQ(mine->section, bpf_program__section_name(prog));
    EXPECT_EQ(mine->prog_type, uint32_t(bpf_program__type(prog)));
    const bpf_insn* theirs = bpf_program__insns(prog);
    size_t n = bpf_program__insn_cnt(prog);
    ASSERT_EQ(mine->insns.size(), n) << mine->name;
    for (size_t i = 0; i < n; ++i) {
      const bpf_insn& a = mine->insns[i];
      const bpf_insn& b = theirs[i];
      SCOPED_TRACE(mine->name + " insn " + std::to_string(i));
      if (is_lddw(a) &&
          (a.src_reg == BPF_PSEUDO_MAP_IDX || a.src_reg == BPF_PSEUDO_MAP_IDX_VALUE)) {
        ASSERT_TRUE(is_lddw(b));
        EXPECT_EQ(b.src_reg,
                  a.src_reg == BPF_PSEUDO_MAP_IDX ? BPF_PSEUDO_MAP_FD : BPF_PSEUDO_MAP_VALUE);
        ASSERT_TRUE(fd_name.count(b.imm));
        const std::string& want = fd_name[b.imm];
        const std::string& got = o.map_specs.at(a.imm).name;
        EXPECT_EQ(got, want);
        EXPECT_EQ(mine->insns[i + 1].imm, theirs[i + 1].imm) << "value offset";
        ++i;
        continue;
      }
      EXPECT_EQ(a.code, b.code);
      EXPECT_EQ(a.dst_reg, b.dst_reg);
      EXPECT_EQ(a.src_reg, b.src_reg);
      EXPECT_EQ(a.off, b.off);
      EXPECT_EQ(a.imm, b.imm);
    }
  }
  EXPECT_EQ(nprogs, o.programs.size());
  bpf_object__close(bo);
}

}  // namespace

TEST(LoaderVsLibbpf, Calls) {
  compare_with_libbpf("calls.o");
}
TEST(LoaderVsLibbpf, Globals) {
  compare_with_libbpf("globals.o");
}
TEST(LoaderVsLibbpf, BtfMaps) {
  compare_with_libbpf("maps_btf.o");
}
