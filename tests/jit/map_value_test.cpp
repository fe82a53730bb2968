// Typed map lookups (jit/safety.h, jit/map_desc.h): the range analysis proves accesses to a
// bpf_map_lookup_elem result after its NULL test (and only then, and only inside value_size),
// and the JIT inlines ARRAY / PERCPU_ARRAY lookups. Each run is compared with the reference
// interpreter on the same maps.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "isa/asm.h"
#include "jit/cfg.h"
#include "jit/executor.h"
#include "jit/map_desc.h"
#include "jit/safety.h"
#include "lookup_helper.h"
#include "maps/array.h"
#include "vm/interp.h"
#include "vm/prepare.h"

namespace knod::jit {
namespace {

// ---- analysis, on a synthetic map at "address" 0x1000 with 16-byte values --------------------

std::vector<AccessInfo> analyze(const std::string& text, MapDesc d) {
  InsnVec p = isa::assemble(text);
  return analyze_accesses(p, find_subprograms(p), CtxKind::kOpaque, {d});
}

MapDesc hash16() {
  MapDesc d;
  d.addr = 0x1000;
  d.type = BPF_MAP_TYPE_HASH;
  d.key_size = 4;
  d.value_size = 16;
  d.max_entries = 8;
  d.values_typed = true;
  return d;
}

constexpr const char* kLookup = R"(
    lddw %r1, 0x1000
    mov %r2, %r10
    add %r2, -4
    stw [%r10-4], 0
    call 1
    mov %r6, %r0
    ldxdw %r3, [%r0+0]
    jeq %r0, 0, out
    ldxdw %r3, [%r6+8]
    ldxdw %r3, [%r0+12]
    stxdw [%r0+0], %r3
    ldxb %r3, [%r0-1]
    lock add [%r6+8], %r3
  out:
    ldxdw %r3, [%r6+0]
    exit)";

TEST(JitMapValue, AccessesAfterTheNullTestAreProvenInsideTheValue) {
  auto a = analyze(kLookup, hash16());
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);   // before the NULL test
  EXPECT_EQ(a[9].kind, AccessKind::kMapValue);  // the copy in r6, bytes 8-15
  EXPECT_EQ(a[9].off, 8);
  EXPECT_EQ(a[9].map, 0);
  EXPECT_EQ(a[10].kind, AccessKind::kChecked);   // bytes 12-19 cross the end of the value
  EXPECT_EQ(a[11].kind, AccessKind::kMapValue);  // store, writable map
  EXPECT_EQ(a[12].kind, AccessKind::kChecked);   // byte -1
  EXPECT_EQ(a[13].kind, AccessKind::kMapValue);  // aligned atomic
  EXPECT_EQ(a[14].kind, AccessKind::kChecked);   // join of NULL and value
  EXPECT_EQ(a[5].kind, AccessKind::kNone);       // a call to a HASH map: not inlinable
}

// A lookup result spilled before its NULL test: the test types the spilled copy too (same
// id, as the kernel's mark_ptr_or_null_regs does for stack slots); where the NULL path joins,
// the slot holds nothing the analysis can use.
TEST(JitMapValue, TheNullTestTypesASpilledCopy) {
  auto a = analyze(R"(
    lddw %r1, 0x1000
    mov %r2, %r10
    add %r2, -4
    stw [%r10-4], 0
    call 1
    stxdw [%r10-16], %r0
    jeq %r0, 0, out
    ldxdw %r6, [%r10-16]
    ldxdw %r3, [%r6+8]
  out:
    ldxdw %r6, [%r10-16]
    ldxdw %r3, [%r6+0]
    exit)",
                   hash16());
  EXPECT_EQ(a[9].kind, AccessKind::kMapValue);
  EXPECT_EQ(a[11].kind, AccessKind::kChecked);
}

TEST(JitMapValue, ReadonlyMapsOnlyProveLoads) {
  MapDesc d = hash16();
  d.readonly = true;
  auto a = analyze(kLookup, d);
  EXPECT_EQ(a[9].kind, AccessKind::kMapValue);
  EXPECT_EQ(a[11].kind, AccessKind::kChecked);
  EXPECT_EQ(a[13].kind, AccessKind::kChecked);
}

TEST(JitMapValue, UntypedMapsAndUnknownPointersStayChecked) {
  MapDesc d = hash16();
  d.values_typed = false;  // e.g. ARRAY_OF_MAPS: the result is an inner map, not a value
  EXPECT_EQ(analyze(kLookup, d)[9].kind, AccessKind::kChecked);
  MapDesc other = hash16();
  other.addr = 0x2000;  // the program names a map the analysis does not know
  EXPECT_EQ(analyze(kLookup, other)[9].kind, AccessKind::kChecked);
}

TEST(JitMapValue, ALoopDoesNotTypeAStaleCopy) {
  // r6 holds the previous iteration's result; r0's NULL test must not make r6 a value.
  auto a = analyze(R"(
    mov %r6, 0
    mov %r7, 3
  loop:
    lddw %r1, 0x1000
    mov %r2, %r10
    add %r2, -4
    stw [%r10-4], 0
    call 1
    jeq %r0, 0, next
    ldxdw %r3, [%r6+0]
    mov %r6, %r0
  next:
    add %r7, -1
    jne %r7, 0, loop
    exit)",
                   hash16());
  EXPECT_EQ(a[9].kind, AccessKind::kChecked);
}

TEST(JitMapValue, GlobalDataAddressesAreValues) {
  MapDesc d = hash16();
  d.type = BPF_MAP_TYPE_ARRAY;
  d.value0 = 0x5000;  // .bss element 0: ld_imm64 BPF_PSEUDO_MAP_VALUE gives value0 + off
  auto a = analyze("lddw %r1, 0x5008\nldxdw %r0, [%r1+0]\nldxdw %r0, [%r1+4]\nexit", d);
  EXPECT_EQ(a[2].kind, AccessKind::kMapValue);
  EXPECT_EQ(a[2].off, 8);
  EXPECT_EQ(a[3].kind, AccessKind::kChecked);  // bytes 12-19
}

TEST(JitMapValue, ArrayLookupWithAStackKeyIsInlinable) {
  MapDesc d = hash16();
  d.type = BPF_MAP_TYPE_ARRAY;
  d.values = 0x9000;
  d.stride = 16;
  auto a = analyze(kLookup, d);
  EXPECT_EQ(a[5].kind, AccessKind::kArrayLookup);
  EXPECT_EQ(a[5].off, -4);
  EXPECT_EQ(a[5].map, 0);
}

// ---- execution: real maps, JIT (with the env's maps compiled in) against the interpreter ------

using test::lookup_helpers;

struct Fixture {
  vm::Env env;
  std::shared_ptr<maps::ArrayMap> map;
  Fixture(uint32_t type, uint32_t flags, uint32_t ncpus) {
    maps::MapDef def{type, 4, 16, 4, flags, -1};
    map = std::make_shared<maps::ArrayMap>("a", def, ncpus);
    for (uint32_t i = 0; i < 4; ++i)
      for (uint32_t c = 0; c < ncpus; ++c) {
        uint64_t v[2] = {100 * i + c, 7};
        std::memcpy(map->at(i, c), v, 16);
      }
    env.maps.push_back(map);
    env.helpers = &lookup_helpers();
    vm::add_value_regions(env);
  }
  // Program: r0 = value[0] of key `key` plus `extra` (a body that runs after the NULL test).
  std::string program(int64_t key, const std::string& extra) const {
    return "lddw %r1, " + std::to_string(reinterpret_cast<uint64_t>(map.get())) +
           "\nmov %r2, %r10\nadd %r2, -4\nstw [%r10-4], " + std::to_string(key) +
           "\ncall 1\njne %r0, 0, found\nmov %r0, 999\nexit\nfound:\n" + extra +
           "ldxdw %r0, [%r0+0]\nexit";
  }
  struct Out {
    uint64_t r0;
    vm::Fault fault;
  };
  Out run(vm::Executor& ex, const vm::Program& p, uint32_t cpu) {
    vm::Run r;
    r.env = &env;
    r.cpu = cpu;
    uint64_t r0 = ex.run(r, p, 0, 0);
    return {r0, r.fault};
  }
};

struct Case {
  const char* name;
  uint32_t type, flags, ncpus, cpu;
  int64_t key;
  const char* extra;
  uint64_t r0;
  vm::Fault fault;
  uint64_t word0_after;  ///< value[0] of the key's slot after the run (cpu `cpu`), when in range
};

class Exec : public ::testing::TestWithParam<Case> {};

TEST_P(Exec, JitAgreesWithInterpreterAndValue) {
  const Case& c = GetParam();
  Fixture fi(c.type, c.flags, c.ncpus), fj(c.type, c.flags, c.ncpus);
  vm::Program pi{"p", isa::assemble(fi.program(c.key, c.extra))};
  vm::Program pj{"p", isa::assemble(fj.program(c.key, c.extra))};
  fi.env.programs.push_back(&pi);
  fj.env.programs.push_back(&pj);
  vm::Interpreter interp;
  JitExecutor jit;
  auto a = fi.run(interp, pi, c.cpu);
  auto b = fj.run(jit, pj, c.cpu);
  EXPECT_EQ(a.fault, c.fault);
  EXPECT_EQ(b.fault, c.fault);
  if (c.fault == vm::Fault::kNone) {
    EXPECT_EQ(a.r0, c.r0);
    EXPECT_EQ(b.r0, c.r0);
  }
  if (c.key >= 0 && c.key < 4 && c.cpu < c.ncpus) {
    uint64_t wi, wj;
    std::memcpy(&wi, fi.map->at(uint32_t(c.key), c.cpu), 8);
    std::memcpy(&wj, fj.map->at(uint32_t(c.key), c.cpu), 8);
    EXPECT_EQ(wi, c.word0_after);
    EXPECT_EQ(wj, c.word0_after);
  }
  const CompiledProgram& cp = jit.compile(pj, &fj.env);
  EXPECT_EQ(cp.stats.inlined_lookups, 1u);
}

constexpr uint32_t kA = BPF_MAP_TYPE_ARRAY, kP = BPF_MAP_TYPE_PERCPU_ARRAY;
constexpr vm::Fault kOk = vm::Fault::kNone, kOob = vm::Fault::kOutOfBounds;
INSTANTIATE_TEST_SUITE_P(
    Maps, Exec,
    ::testing::Values(
        Case{"array_hit", kA, 0, 1, 0, 2, "", 200, kOk, 200},
        Case{"array_miss", kA, 0, 1, 0, 4, "", 999, kOk, 0},
        Case{"array_negative_key", kA, 0, 1, 0, -1, "", 999, kOk, 0},
        Case{"array_store", kA, 0, 1, 0, 3, "stdw [%r0+0], 42\n", 42, kOk, 42},
        Case{"array_past_last_value", kA, 0, 1, 0, 3, "ldxdw %r3, [%r0+16]\n", 0, kOob, 300},
        // Per-value bounds (vm::Region::stride): an access straddling two values faults, at a
        // constant offset and at one the analysis cannot know (7 + 5); inside one it does not.
        Case{"array_straddle", kA, 0, 1, 0, 1, "ldxdw %r3, [%r0+12]\n", 0, kOob, 100},
        Case{"array_straddle_variable", kA, 0, 1, 0, 1,
             "ldxdw %r4, [%r0+8]\nadd %r4, 5\nadd %r0, %r4\nstdw [%r0+0], 1\n", 0, kOob, 100},
        Case{"array_inside_variable", kA, 0, 1, 0, 1,
             "ldxdw %r4, [%r0+8]\nadd %r4, 1\nadd %r0, %r4\nstdw [%r0+0], 5\nadd %r0, -8\n", 100,
             kOk, 100},
        Case{"percpu_straddle", kP, 0, 4, 0, 3, "ldxw %r3, [%r0+14]\n", 0, kOob, 300},
        Case{"array_readonly_store", kA, BPF_F_RDONLY_PROG, 1, 0, 1, "stdw [%r0+8], 1\n", 0, kOob,
             100},
        Case{"percpu_slot", kP, 0, 4, 2, 1, "", 102, kOk, 102},
        Case{"percpu_atomic", kP, 0, 4, 3, 0, "mov %r3, 5\nlock add [%r0+0], %r3\n", 8, kOk, 8},
        Case{"percpu_bad_cpu", kP, 0, 4, 4, 1, "", 999, kOk, 0}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace knod::jit
