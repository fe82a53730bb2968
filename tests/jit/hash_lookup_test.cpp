// Inlined HASH-family lookups (jit/lower_calls.cpp lower_hash_lookup, jit/runtime/rt.cpp
// knod_rt_hash_lookup): the JIT walks the table itself instead of calling the helper. Every run
// is compared with the reference interpreter, which calls maps::HashMap::lookup, and with the
// value the test stored; key sizes cover jhash2 (multiples of 4) and jhash (others).
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstring>
#include <string>

#include "isa/asm.h"
#include "jit/cfg.h"
#include "jit/executor.h"
#include "jit/map_desc.h"
#include "jit/safety.h"
#include "lookup_helper.h"
#include "maps/hash.h"
#include "maps/lpm_trie.h"
#include "vm/interp.h"
#include "vm/prepare.h"

namespace knod::jit {
namespace {

constexpr uint32_t kEntries = 8;
constexpr uint64_t kMiss = 999;  // r0 when the lookup returned NULL

using test::lookup_helpers;

/// Key n: key_size bytes n*37+j (distinct keys, many sharing buckets of an 8-bucket table).
std::vector<uint8_t> key_of(uint32_t n, uint32_t key_size) {
  std::vector<uint8_t> k(key_size);
  for (uint32_t j = 0; j < key_size; ++j) k[j] = uint8_t(n * 37 + j);
  return k;
}

struct Fixture {
  vm::Env env;
  std::shared_ptr<maps::HashMap> map;
  uint32_t key_size, ncpus;
  Fixture(uint32_t type, uint32_t ks, uint32_t cpus) : key_size(ks), ncpus(cpus) {
    map = std::make_shared<maps::HashMap>("h", maps::MapDef{type, ks, 16, kEntries, 0, -1}, cpus);
    env.maps.push_back(map);
    env.helpers = &lookup_helpers();
    vm::add_value_regions(env);
  }
  bool percpu() const { return map->percpu(); }
  /// Value word 0 of key n on cpu c: 1000 * n + c.
  void put(uint32_t n) {
    std::vector<uint64_t> v(percpu() ? 2 * ncpus : 2);
    for (uint32_t c = 0; c < (percpu() ? ncpus : 1); ++c) v[2 * c] = 1000 * n + c, v[2 * c + 1] = 7;
    auto k = key_of(n, key_size);
    ASSERT_EQ(map->user_update(k.data(), v.data(), BPF_ANY), 0);
  }
  /// r0 = word 0 of the value of key n, or kMiss.
  vm::Program program(uint32_t n) const {
    std::string t = "lddw %r1, " + std::to_string(reinterpret_cast<uint64_t>(map.get())) + "\n";
    auto k = key_of(n, key_size);
    for (uint32_t j = 0; j < key_size; ++j)
      t += "stb [%r10-" + std::to_string(key_size - j) + "], " + std::to_string(k[j]) + "\n";
    t += "mov %r2, %r10\nadd %r2, -" + std::to_string(key_size) + "\ncall 1\n";
    t += "jne %r0, 0, found\nmov %r0, " + std::to_string(kMiss) + "\nexit\nfound:\n";
    t += "ldxdw %r0, [%r0+0]\nexit";
    return vm::Program{"p", isa::assemble(t)};
  }
  uint64_t run(vm::Executor& ex, const vm::Program& p, uint32_t cpu) {
    vm::Run r;
    r.env = &env;
    r.cpu = cpu;
    uint64_t r0 = ex.run(r, p, 0, 0);
    EXPECT_EQ(r.fault, vm::Fault::kNone);
    return r0;
  }
};

struct Case {
  const char* name;
  uint32_t type, key_size, ncpus, cpu;
};

class HashLookup : public ::testing::TestWithParam<Case> {};

// Keys 0-5 stored, 6 and 7 not: JIT (-O2 and -O0, where the key compare stays a memcmp call)
// equals the interpreter and the stored value; the lookup was inlined.
TEST_P(HashLookup, JitAgreesWithInterpreterOnHitsAndMisses) {
  const Case& c = GetParam();
  Fixture f(c.type, c.key_size, c.ncpus);
  for (uint32_t n = 0; n < 6; ++n) f.put(n);
  vm::Interpreter interp;
  JitExecutor o2, o0(JitOptions{.opt_level = 0});
  for (uint32_t n = 0; n < 8; ++n) {
    vm::Program p = f.program(n);
    f.env.programs = {&p};
    const uint64_t want = n >= 6            ? kMiss
                          : !f.percpu()     ? 1000 * n
                          : c.cpu < f.ncpus ? 1000 * n + c.cpu
                                            : kMiss;
    EXPECT_EQ(f.run(interp, p, c.cpu), want) << "key " << n;
    EXPECT_EQ(f.run(o2, p, c.cpu), want) << "key " << n;
    EXPECT_EQ(f.run(o0, p, c.cpu), want) << "key " << n << " at -O0";
    EXPECT_EQ(o2.compile(p, &f.env).stats.inlined_lookups, 1u);
  }
}

constexpr uint32_t kH = BPF_MAP_TYPE_HASH, kL = BPF_MAP_TYPE_LRU_HASH;
constexpr uint32_t kPH = BPF_MAP_TYPE_PERCPU_HASH, kLPH = BPF_MAP_TYPE_LRU_PERCPU_HASH;
INSTANTIATE_TEST_SUITE_P(
    Maps, HashLookup,
    ::testing::Values(Case{"hash_key4", kH, 4, 1, 0}, Case{"hash_key5", kH, 5, 1, 0},
                      Case{"hash_key16", kH, 16, 1, 0}, Case{"hash_key13", kH, 13, 1, 0},
                      Case{"lru_key8", kL, 8, 1, 0}, Case{"percpu_cpu2", kPH, 4, 4, 2},
                      Case{"percpu_bad_cpu", kPH, 4, 4, 4}, Case{"lru_percpu_cpu1", kLPH, 6, 2, 1}),
    [](const auto& info) { return std::string(info.param.name); });

// The compiled code holds the table's addresses, not its contents: deletes, re-inserts and new
// values after compilation are seen by the next run.
TEST(HashLookupLive, SeesChangesMadeAfterCompilation) {
  Fixture f(kH, 4, 1);
  f.put(3);
  vm::Program p = f.program(3);
  f.env.programs = {&p};
  JitExecutor jit;
  EXPECT_EQ(f.run(jit, p, 0), 3000u);
  auto k = key_of(3, 4);
  ASSERT_EQ(f.map->remove(k.data()), 0);
  EXPECT_EQ(f.run(jit, p, 0), kMiss);
  for (uint32_t n = 0; n < kEntries; ++n)
    if (n != 3) f.put(n);  // the freed element is reused by another key
  EXPECT_EQ(f.run(jit, p, 0), kMiss);
  ASSERT_EQ(f.map->remove(key_of(0, 4).data()), 0);
  uint64_t v[2] = {4242, 0};
  ASSERT_EQ(f.map->user_update(k.data(), v, BPF_ANY), 0);
  EXPECT_EQ(f.run(jit, p, 0), 4242u);
}

// An LRU hit sets the element's reference byte (second chance on eviction), as HashMap::lookup.
TEST(HashLookupLive, LruHitSetsTheReferenceByte) {
  Fixture f(kL, 4, 1);
  for (uint32_t n = 0; n < 4; ++n) f.put(n);
  uint8_t* ref = f.map->lru_ref();
  ASSERT_NE(ref, nullptr);
  std::memset(ref, 0, kEntries);
  vm::Program p = f.program(2);
  f.env.programs = {&p};
  JitExecutor jit;
  EXPECT_EQ(f.run(jit, p, 0), 2000u);
  int set = 0;
  for (uint32_t e = 0; e < kEntries; ++e) set += ref[e];
  EXPECT_EQ(set, 1);
  vm::Program miss = f.program(6);
  f.env.programs = {&miss};
  std::memset(ref, 0, kEntries);
  EXPECT_EQ(f.run(jit, miss, 0), kMiss);
  for (uint32_t e = 0; e < kEntries; ++e) EXPECT_EQ(ref[e], 0) << e;
}

/// A HASH map at ld_imm64 value 0x1000: 8-byte keys, 16-byte values, no table yet.
MapDesc hash_desc() {
  MapDesc d;
  d.addr = 0x1000;
  d.type = kH;
  d.key_size = 8;
  d.value_size = 16;
  d.max_entries = 8;
  d.values_typed = true;
  return d;
}

// Analysis: a HASH map with a known table and the whole key on the stack is inlinable; a key
// reaching above r10, or a map without a table (GPU lowering), is not.
TEST(HashLookupAnalysis, KeyMustLieOnTheStack) {
  MapDesc d = hash_desc();
  auto analyze = [&](int off) {
    std::string t =
        "lddw %r1, 0x1000\nmov %r2, %r10\nadd %r2, " + std::to_string(off) + "\ncall 1\nexit";
    InsnVec p = isa::assemble(t);
    return analyze_accesses(p, find_subprograms(p), CtxKind::kOpaque, {d})[4].kind;
  };
  EXPECT_EQ(analyze(-8), AccessKind::kNone);  // no table: the helper is called
  uint32_t head = 0;
  d.hash.head = &head;
  EXPECT_EQ(analyze(-8), AccessKind::kHashLookup);
  EXPECT_EQ(analyze(-512), AccessKind::kHashLookup);
  EXPECT_EQ(analyze(-4), AccessKind::kNone);    // bytes 4-7 of the key above r10
  EXPECT_EQ(analyze(-520), AccessKind::kNone);  // below the frame
}

// A key in the packet (e.g. bpf_map_lookup_elem(&m, &iph->daddr)) is inlinable when all its
// bytes are proven below data_end; the lowering then hashes the packet bytes in place.
TEST(HashLookupAnalysis, KeyMayLieInProvenPacketBytes) {
  MapDesc d = hash_desc();
  uint32_t head = 0;
  d.hash.head = &head;
  auto analyze = [&](int key_off, int checked) {
    std::string t =
        "mov %r6, %r1\nldxw %r2, [%r6+0]\nldxw %r3, [%r6+4]\nmov %r4, %r2\n"
        "add %r4, " +
        std::to_string(checked) + "\njgt %r4, %r3, out\nadd %r2, " + std::to_string(key_off) +
        "\nlddw %r1, 0x1000\ncall 1\nout:\nexit";
    InsnVec p = isa::assemble(t);
    return analyze_accesses(p, find_subprograms(p), CtxKind::kXdp, {d})[9];
  };
  AccessInfo a = analyze(0, 8);
  EXPECT_EQ(a.kind, AccessKind::kHashLookup);
  EXPECT_TRUE(a.packet_key);
  EXPECT_EQ(analyze(26, 34).kind, AccessKind::kHashLookup);  // iph->saddr behind the checks
  EXPECT_EQ(analyze(0, 4).kind, AccessKind::kNone);          // bytes 4-7 not proven
  EXPECT_EQ(analyze(30, 34).kind, AccessKind::kNone);        // runs past the checked 34
  EXPECT_FALSE(analyze(-8, 8).packet_key);                   // before data: not a packet key
}

// A map the JIT does not walk (LPM_TRIE) with a proven key: its lookup is called directly,
// with the interpreter's results (longest prefix, misses) on every key.
TEST(MapLookupDirect, LpmTrieAgreesWithInterpreter) {
  vm::Env env;
  auto lpm = std::make_shared<maps::LpmTrieMap>(
      "lpm", maps::MapDef{BPF_MAP_TYPE_LPM_TRIE, 8, 8, 16, BPF_F_NO_PREALLOC, -1});
  env.maps.push_back(lpm);
  env.helpers = &lookup_helpers();
  vm::add_value_regions(env);
  auto put = [&](uint32_t plen, uint32_t addr_be, uint64_t v) {
    uint8_t k[8];
    std::memcpy(k, &plen, 4);
    std::memcpy(k + 4, &addr_be, 4);
    ASSERT_EQ(lpm->user_update(k, &v, BPF_ANY), 0);
  };
  put(8, 0x0000000a, 8);    // 10.0.0.0/8
  put(24, 0x0001000a, 24);  // 10.0.1.0/24
  struct Probe {
    uint32_t addr_be;
    uint64_t want;
  };
  const Probe probes[] = {{0x0501000a, 24}, {0x0502000a, 8}, {0x0100000b, kMiss}};
  vm::Interpreter interp;
  JitExecutor jit;
  for (const Probe& pr : probes) {
    std::string t = "lddw %r1, " + std::to_string(reinterpret_cast<uint64_t>(lpm.get())) + "\n";
    t += "stw [%r10-8], 32\nstw [%r10-4], " + std::to_string(int32_t(pr.addr_be)) + "\n";
    t += "mov %r2, %r10\nadd %r2, -8\ncall 1\njne %r0, 0, found\nmov %r0, " +
         std::to_string(kMiss) + "\nexit\nfound:\nldxdw %r0, [%r0+0]\nexit";
    vm::Program p{"p", isa::assemble(t)};
    env.programs = {&p};
    for (vm::Executor* ex :
         {static_cast<vm::Executor*>(&interp), static_cast<vm::Executor*>(&jit)}) {
      vm::Run r;
      r.env = &env;
      EXPECT_EQ(ex->run(r, p, 0, 0), pr.want) << ex->name() << " " << std::hex << pr.addr_be;
      EXPECT_EQ(r.fault, vm::Fault::kNone);
    }
    // Not inlined (no table walk for LPM) but not the helper either.
    auto desc = describe_maps(env, true);
    EXPECT_EQ(analyze_accesses(p.insns, find_subprograms(p.insns), CtxKind::kOpaque, desc)[6].kind,
              AccessKind::kMapLookup);
    EXPECT_EQ(analyze_accesses(p.insns, find_subprograms(p.insns), CtxKind::kOpaque,
                               describe_maps(env, false))[6]
                  .kind,
              AccessKind::kNone);  // a GPU's maps: the helper
  }
}

}  // namespace
}  // namespace knod::jit
