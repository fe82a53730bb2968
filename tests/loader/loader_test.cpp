// The loader against objects built from tests/bpf/*.c: programs, maps, and the exact linked
// instructions (call targets, map references, global-data offsets).
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include "base/error.h"
#include "loader/object.h"
#include "maps/map_in_map.h"
#include "maps/prog_array.h"

using namespace knod;
using namespace knod::loader;

namespace {
std::string obj_path(const char* name) {
  return std::string(KNOD_TEST_BPF_DIR) + "/" + name;
}

Object load(const char* name, LoadOptions o = {}) {
  if (!o.ncpus) o.ncpus = 2;
  return load_object(obj_path(name), o);
}

/// The knod::Error loading `name` throws, or "" (a test failure) when it loads.
std::string load_error(const char* name, LoadOptions o = {}) {
  try {
    load(name, o);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << ": expected an error";
  return "";
}

// Every ld_imm64 of p: (insn index, src_reg, imm, next imm).
struct Ref {
  size_t pc;
  int src;
  int imm, imm2;
};
std::vector<Ref> lddws(const ProgramSpec& p) {
  std::vector<Ref> out;
  for (size_t i = 0; i + 1 < p.insns.size(); ++i)
    if (is_lddw(p.insns[i])) {
      out.push_back({i, p.insns[i].src_reg, p.insns[i].imm, p.insns[i + 1].imm});
      ++i;
    }
  return out;
}
}  // namespace

TEST(Loader, CallsSharedSubprogramsAreCopiedDepthFirst) {
  Object o = load("calls.o");
  EXPECT_EQ(o.license, "GPL");
  ASSERT_EQ(o.programs.size(), 2u);
  const ProgramSpec* one = o.find_program("xdp_one");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->section, "xdp");
  EXPECT_EQ(one->prog_type, BPF_PROG_TYPE_XDP);
  // xdp_one (10) + shared_mix (4) + middle (7) + leaf (3), in the order first reached.
  ASSERT_EQ(one->insns.size(), 24u);
  auto call = [](const ProgramSpec& p, size_t pc) {
    EXPECT_EQ(p.insns[pc].code, BPF_JMP | BPF_CALL) << pc;
    EXPECT_EQ(p.insns[pc].src_reg, BPF_PSEUDO_CALL) << pc;
    return p.insns[pc].imm;
  };
  EXPECT_EQ(call(*one, 1), 10 - 1 - 1);                 // -> shared_mix at 10
  EXPECT_EQ(call(*one, 3), 14 - 3 - 1);                 // -> middle at 14
  EXPECT_EQ(call(*one, 15), 21 - 15 - 1);               // middle -> leaf at 21
  EXPECT_EQ(call(*one, 18), 10 - 18 - 1);               // middle -> shared_mix (already placed)
  EXPECT_EQ(one->insns[11].imm, int32_t(2654435761u));  // shared_mix body: r0 *= 0x9e3779b1

  const ProgramSpec* two = o.find_program("tc");  // by section
  ASSERT_TRUE(two);
  EXPECT_EQ(two->name, "tc_two");
  EXPECT_EQ(two->prog_type, BPF_PROG_TYPE_SCHED_CLS);
  // tc_two (14) + shared_mix (4) + loop_cb (5) + global_helper (3).
  ASSERT_EQ(two->insns.size(), 26u);
  EXPECT_EQ(call(*two, 1), 14 - 1 - 1);
  auto refs = lddws(*two);
  ASSERT_EQ(refs.size(), 1u);  // the bpf_loop callback
  EXPECT_EQ(refs[0].pc, 6u);
  EXPECT_EQ(refs[0].src, BPF_PSEUDO_FUNC);
  EXPECT_EQ(refs[0].imm, 18 - 6 - 1);
  EXPECT_EQ(two->insns[9].imm, BPF_FUNC_loop);
  EXPECT_EQ(two->insns[9].src_reg, 0);
  EXPECT_EQ(call(*two, 11), 23 - 11 - 1);  // global_helper (global function in .text)
  EXPECT_EQ(o.find_program("nope"), nullptr);
}

TEST(Loader, GlobalDataBecomesArrayMapsWithOffsets) {
  Object o = load("globals.o");
  ASSERT_EQ(o.map_specs.size(), 3u);
  int data = o.find_map(".data"), ro = o.find_map(".rodata"), bss = o.find_map(".bss");
  ASSERT_GE(data, 0);
  ASSERT_GE(ro, 0);
  ASSERT_GE(bss, 0);
  const MapSpec& d = o.map_specs[data];
  EXPECT_EQ(d.def.type, BPF_MAP_TYPE_ARRAY);
  EXPECT_EQ(d.def.key_size, 4u);
  EXPECT_EQ(d.def.value_size, 16u);
  EXPECT_EQ(d.def.max_entries, 1u);
  EXPECT_EQ(d.def.map_flags & BPF_F_RDONLY_PROG, 0u);
  EXPECT_EQ(o.map_specs[ro].def.map_flags & BPF_F_RDONLY_PROG, uint32_t(BPF_F_RDONLY_PROG));
  EXPECT_TRUE(o.maps[ro]->prog_readonly());
  EXPECT_FALSE(o.maps[data]->prog_readonly());
  EXPECT_EQ(o.map_specs[ro].def.value_size, 20u);
  EXPECT_EQ(o.map_specs[bss].def.value_size, 20u);
  // Initial bytes: data_a = 7 at 0, data_b at 8; ro_a = 3, ro_b = {10,20,30,40}; .bss zero.
  uint32_t zero = 0;
  std::vector<uint8_t> v(16);
  ASSERT_EQ(o.maps[data]->user_lookup(&zero, v.data()), 0);
  uint32_t a;
  uint64_t b;
  memcpy(&a, v.data(), 4);
  memcpy(&b, v.data() + 8, 8);
  EXPECT_EQ(a, 7u);
  EXPECT_EQ(b, 0x1122334455667788ull);
  std::vector<uint32_t> r(5);
  ASSERT_EQ(o.maps[ro]->user_lookup(&zero, r.data()), 0);
  EXPECT_EQ(r, (std::vector<uint32_t>{3, 10, 20, 30, 40}));
  std::vector<uint8_t> z(20, 0xff);
  ASSERT_EQ(o.maps[bss]->user_lookup(&zero, z.data()), 0);
  EXPECT_EQ(z, std::vector<uint8_t>(20, 0));

  const ProgramSpec& p = o.programs.at(0);
  auto refs = lddws(p);
  // (pc, map, offset) as llvm-objdump -dr shows the relocations and symbol values.
  std::vector<std::tuple<size_t, int, int>> want = {{0, data, 8}, {3, bss, 0},   {8, ro, 0},
                                                    {12, ro, 4},  {16, data, 0}, {20, bss, 8}};
  ASSERT_EQ(refs.size(), want.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    EXPECT_EQ(refs[i].pc, std::get<0>(want[i]));
    EXPECT_EQ(refs[i].src, BPF_PSEUDO_MAP_IDX_VALUE);
    EXPECT_EQ(refs[i].imm, std::get<1>(want[i])) << "ld_imm64 at " << refs[i].pc;
    EXPECT_EQ(refs[i].imm2, std::get<2>(want[i])) << "ld_imm64 at " << refs[i].pc;
  }
}

TEST(Loader, LegacyMapsSection) {
  Object o = load("legacy_maps.o");
  ASSERT_EQ(o.map_specs.size(), 3u);
  const MapSpec& tx = o.map_specs[o.find_map("tx_port")];
  EXPECT_TRUE(tx.legacy);
  EXPECT_EQ(tx.def.type, BPF_MAP_TYPE_DEVMAP);
  EXPECT_EQ(tx.def.key_size, 4u);
  EXPECT_EQ(tx.def.value_size, 4u);
  EXPECT_EQ(tx.def.max_entries, 64u);
  const MapSpec& rx = o.map_specs[o.find_map("rxcnt")];
  EXPECT_EQ(rx.def.type, BPF_MAP_TYPE_PERCPU_ARRAY);
  EXPECT_EQ(rx.def.max_entries, 256u);
  const MapSpec& fl = o.map_specs[o.find_map("flows")];
  EXPECT_EQ(fl.def.type, BPF_MAP_TYPE_LRU_HASH);
  EXPECT_EQ(fl.def.key_size, 8u);
  EXPECT_EQ(fl.def.value_size, 16u);
  EXPECT_EQ(fl.def.max_entries, 1000u);
  ASSERT_EQ(o.programs.size(), 1u);
  const ProgramSpec& p = o.programs[0];
  EXPECT_EQ(p.name, "xdp_redirect_map_prog");
  EXPECT_EQ(p.section, "xdp_redirect_map");
  EXPECT_EQ(p.prog_type, BPF_PROG_TYPE_XDP);  // libbpf 0.x prefix rule
  // Map references in source order: rxcnt, flows, tx_port.
  auto refs = lddws(p);
  std::vector<int> got;
  for (auto& r : refs) {
    EXPECT_EQ(r.src, BPF_PSEUDO_MAP_IDX);
    got.push_back(r.imm);
  }
  EXPECT_EQ(got,
            (std::vector<int>{o.find_map("rxcnt"), o.find_map("flows"), o.find_map("tx_port")}));
  EXPECT_EQ(o.maps[o.find_map("rxcnt")]->user_value_size(), 2u * 8u);
}

TEST(Loader, BtfMapsOfSeveralTypes) {
  Object o = load("maps_btf.o");
  auto def = [&](const char* n) {
    int i = o.find_map(n);
    EXPECT_GE(i, 0) << n;
    return o.map_specs.at(i).def;
  };
  EXPECT_EQ(def("counts").type, BPF_MAP_TYPE_HASH);
  EXPECT_EQ(def("counts").key_size, 4u);
  EXPECT_EQ(def("counts").value_size, 16u);  // struct pair {u32; u64}
  EXPECT_EQ(def("counts").max_entries, 64u);
  EXPECT_EQ(def("stats").type, BPF_MAP_TYPE_PERCPU_ARRAY);
  EXPECT_EQ(def("routes").type, BPF_MAP_TYPE_LPM_TRIE);
  EXPECT_EQ(def("routes").key_size, 8u);
  EXPECT_EQ(def("routes").map_flags, uint32_t(BPF_F_NO_PREALLOC));
  EXPECT_EQ(def("events").type, BPF_MAP_TYPE_RINGBUF);
  EXPECT_EQ(def("events").max_entries, 4096u);
  EXPECT_EQ(def("perf").type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  EXPECT_EQ(def("perf").max_entries, 2u);  // 0 in the object: ncpus
  EXPECT_EQ(def("ports").value_size, 8u);  // struct bpf_devmap_val
  EXPECT_EQ(def("fifo").type, BPF_MAP_TYPE_QUEUE);
  EXPECT_EQ(def("fifo").key_size, 0u);
  // Map-in-map: the inner template and the initial value [2] = &inner_a.
  maps::MapDef outer = def("outer");
  EXPECT_EQ(outer.type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  EXPECT_EQ(outer.value_size, 4u);
  ASSERT_GE(outer.inner_map, 0);
  EXPECT_EQ(o.map_specs[outer.inner_map].name, "outer.inner");
  EXPECT_TRUE(o.map_specs[outer.inner_map].inner_template);
  EXPECT_EQ(o.map_specs[outer.inner_map].def.type, BPF_MAP_TYPE_ARRAY);
  EXPECT_EQ(o.map_specs[outer.inner_map].def.value_size, 8u);
  auto* mm = dynamic_cast<maps::MapOfMaps*>(o.maps[o.find_map("outer")].get());
  ASSERT_TRUE(mm);
  uint32_t k = 2, k0 = 0;
  EXPECT_EQ(mm->inner(&k), o.maps[o.find_map("inner_a")].get());
  EXPECT_EQ(mm->inner(&k0), nullptr);
  // PROG_ARRAY initialised with xdp_tail.
  auto* pa = dynamic_cast<maps::ProgArray*>(o.maps[o.find_map("jumps")].get());
  ASSERT_TRUE(pa);
  ASSERT_GE(pa->get(1), 0);
  EXPECT_EQ(o.programs.at(pa->get(1)).name, "xdp_tail");
  EXPECT_EQ(pa->get(0), -1);
  // Every map the program names resolves to the map of that name, in source order.
  const ProgramSpec* p = o.find_program("xdp_maps");
  ASSERT_TRUE(p);
  std::vector<std::string> names;
  for (auto& r : lddws(*p)) {
    if (r.src == 0) continue;  // a plain 64-bit constant (the LPM key)
    ASSERT_EQ(r.src, BPF_PSEUDO_MAP_IDX);
    names.push_back(o.map_specs.at(r.imm).name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"counts", "stats", "routes", "events", "perf", "fifo",
                                             "outer", "jumps", "ports"}));
}

// A map type knod lacks fails the load with the object's path, the map and the type.
TEST(Loader, UnsupportedMapTypeNamesTheObject) {
  EXPECT_EQ(load_error("sockmap.o"),
            obj_path("sockmap.o") + ": map 'socks': BPF_MAP_TYPE_SOCKMAP is not supported by knod");
}

TEST(Loader, MaxEntriesZeroNeedsASize) {
  const std::string e = load_error("zero_max.o");
  EXPECT_NE(e.find("map 'sized_later' declares max_entries 0"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-entries"), std::string::npos);
  LoadOptions o;
  o.max_entries["sized_later"] = 128;
  EXPECT_EQ(load("zero_max.o", o).map_specs[0].def.max_entries, 128u);
  LoadOptions d;
  d.default_max_entries = 32;
  EXPECT_EQ(load("zero_max.o", d).map_specs[0].def.max_entries, 32u);
  // An override wins over the object's own value too.
  LoadOptions big;
  big.max_entries["counts"] = 1000;
  EXPECT_EQ(load("maps_btf.o", big).map_specs[0].def.max_entries, 1000u);
}

TEST(Loader, KfuncIsRefusedByName) {
  const std::string e = load_error("kfunc.o");
  EXPECT_NE(e.find("kfunc 'bpf_xdp_metadata_rx_hash'"), std::string::npos) << e;
}

TEST(Loader, ProgTypeFromSectionName) {
  Object o = load("sections.o");
  auto type = [&](const char* name) {
    const ProgramSpec* p = o.find_program(name);
    EXPECT_TRUE(p) << name;
    return p ? std::make_pair(p->prog_type, p->expected_attach_type) : std::make_pair(~0u, ~0u);
  };
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(type("p_frags"), P(BPF_PROG_TYPE_XDP, BPF_XDP));
  EXPECT_EQ(o.find_program("p_frags")->prog_flags, uint32_t(BPF_F_XDP_HAS_FRAGS));
  EXPECT_EQ(o.find_program("p_devmap")->prog_flags, 0u);
  EXPECT_EQ(type("p_devmap"), P(BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP));
  EXPECT_EQ(type("p_cpumap"), P(BPF_PROG_TYPE_XDP, BPF_XDP_CPUMAP));
  EXPECT_EQ(type("p_tc").first, uint32_t(BPF_PROG_TYPE_SCHED_CLS));
  EXPECT_EQ(type("p_cls").first, uint32_t(BPF_PROG_TYPE_SCHED_CLS));
  EXPECT_EQ(type("p_sock").first, uint32_t(BPF_PROG_TYPE_SOCKET_FILTER));
  EXPECT_EQ(type("p_legacy"), P(BPF_PROG_TYPE_XDP, BPF_XDP));  // libbpf 0.x "xdp" prefix rule
  EXPECT_EQ(type("p_unknown").first, uint32_t(BPF_PROG_TYPE_UNSPEC));
  EXPECT_EQ(o.find_program("xdp/devmap")->name, "p_devmap");
}

TEST(Loader, ExternVariableIsRefusedByName) {
  EXPECT_EQ(load_error("extern_var.o"),
            obj_path("extern_var.o") +
                ": extern symbol 'LINUX_KERNEL_VERSION' is not supported "
                "(unresolved extern in 'xdp_kver')");
}

// Map sizes as libbpf 1.1 creates them: a RINGBUF rounded up to a power-of-2 multiple of the
// page size (adjust_ringbuf_sz, also for a --max-entries size); a CPUMAP of 0 entries needs a
// size (libbpf sizes only PERF_EVENT_ARRAY; the kernel refuses a CPUMAP of 0).
TEST(Loader, RingbufSizeRoundedAsLibbpf) {
  const uint32_t page = uint32_t(sysconf(_SC_PAGESIZE));
  uint32_t want = page;
  while (want <= 5000) want *= 2;
  LoadOptions o;
  o.max_entries["cpus"] = 2;
  EXPECT_EQ(load("ringbuf_size.o", o).map_specs[0].def.max_entries, want);
  o.max_entries["events"] = 3 * page;
  EXPECT_EQ(load("ringbuf_size.o", o).map_specs[0].def.max_entries, 4 * page);
  o.max_entries["events"] = 2 * page;  // already a power-of-2 multiple: kept
  EXPECT_EQ(load("ringbuf_size.o", o).map_specs[0].def.max_entries, 2 * page);
  const std::string e = load_error("ringbuf_size.o");
  EXPECT_NE(e.find("map 'cpus' declares max_entries 0"), std::string::npos) << e;
}

TEST(Loader, StaticProgramIsRefusedAsLibbpf) {
  const std::string e = load_error("static_prog.o");
  EXPECT_NE(e.find("program 'p_static' is static and not supported"), std::string::npos) << e;
}

// BTF map definitions libbpf refuses (parse_btf_map_def).
TEST(Loader, BadBtfMapDefinitionsAreRefusedAsLibbpf) {
  EXPECT_NE(load_error("bad_pinning.o").find("map 'pinned': invalid pinning value 5"),
            std::string::npos);
  EXPECT_NE(load_error("key_size_conflict.o").find("map 'conflict': conflicting key size 8 != 4"),
            std::string::npos);
}
