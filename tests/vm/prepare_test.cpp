// prepare(): map references become host values; bad references fail to load.
#include "vm/prepare.h"

#include <cstring>

#include "base/error.h"
#include "maps/map.h"
#include "vm_test_util.h"

namespace knod::vm::test {
namespace {

/// A one-element array map (key 0) with a 16-byte value, enough for ld_imm64 tests.
class OneValueMap : public maps::Map {
 public:
  OneValueMap() : Map("cfg", maps::MapDef{BPF_MAP_TYPE_ARRAY, 4, 16, 1}) {}
  void* lookup(const void* key, uint32_t) override {
    uint32_t k;
    std::memcpy(&k, key, 4);
    return k == 0 ? value : nullptr;
  }
  long update(const void*, const void* v, uint64_t, uint32_t) override {
    std::memcpy(value, v, sizeof value);
    return 0;
  }
  long remove(const void*) override { return -22; }
  long user_lookup(const void*, void* v) override {
    std::memcpy(v, value, sizeof value);
    return 0;
  }
  long user_update(const void* k, const void* v, uint64_t f) override { return update(k, v, f, 0); }
  long get_next_key(const void*, void*) override { return -2; }
  std::vector<Pool> value_pools() override { return {{value, sizeof value}}; }
  alignas(8) uint8_t value[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
};

TEST(Prepare, MapReferences) {
  auto map = std::make_shared<OneValueMap>();
  Env env;
  env.helpers = &conformance_helpers();
  env.maps = {map};
  const uint64_t v = reinterpret_cast<uint64_t>(map->value);
  env.static_regions = {Region{v, v + 16, true}};
  Program p = prepare("m", isa::assemble("lddw %r0, map_idx(0)\nexit"), env);
  EXPECT_EQ(p.insns[0].src_reg, 0);
  Interpreter interp;
  vm::Run run;
  run.env = &env;
  EXPECT_EQ(interp.run(run, p, 0, 0), reinterpret_cast<uint64_t>(map.get()));
  EXPECT_EQ(run.map_arg(reinterpret_cast<uint64_t>(map.get())), map.get());

  Program q = prepare(
      "v", isa::assemble("lddw %r1, map_idx_value(0)+8\nldxdw %r0, [%r1]\nstb [%r1], 0\nexit"),
      env);
  vm::Run run2;
  run2.env = &env;
  EXPECT_EQ(interp.run(run2, q, 0, 0), 0x100f0e0d0c0b0a09u);
  EXPECT_EQ(run2.fault, Fault::kNone);
  EXPECT_EQ(map->value[8], 0);  // the program wrote the map value
}

// add_value_regions: a pool of 12-byte values 16 bytes apart (the ARRAY layout) admits an
// access inside one value only: not the 4 padding bytes, not one straddling two values.
TEST(Prepare, ValueRegionsBoundEachValue) {
  alignas(8) static uint8_t pool[64];
  class Pool12 : public OneValueMap {
    std::vector<Pool> value_pools() override { return {{pool, sizeof pool, 16, 12}}; }
  };
  Env env;
  env.maps = {std::make_shared<Pool12>()};
  add_value_regions(env);
  ASSERT_EQ(env.static_regions.size(), 1u);
  const uint64_t lo = reinterpret_cast<uint64_t>(pool);
  vm::Run run;
  run.env = &env;
  EXPECT_TRUE(run.can_access(lo, 12, true));
  EXPECT_TRUE(run.can_access(lo + 8, 4, true));
  EXPECT_FALSE(run.can_access(lo + 8, 8, false));  // value 0 bytes 8..15: 4 bytes of padding
  EXPECT_FALSE(run.can_access(lo + 12, 1, false));
  EXPECT_FALSE(run.can_access(lo + 12, 8, false));  // padding + the next value
  EXPECT_TRUE(run.can_access(lo + 48, 12, false));  // the last value
  EXPECT_FALSE(run.can_access(lo + 60, 4, false));
  EXPECT_FALSE(run.can_access(lo + 64, 1, false));
}

TEST(Prepare, BadMapReferencesFail) {
  auto map = std::make_shared<OneValueMap>();
  Env env;
  env.helpers = &conformance_helpers();
  env.maps = {map};
  EXPECT_THROW(prepare("x", isa::assemble("lddw %r0, map_idx(1)\nexit"), env), Error);
  EXPECT_THROW(prepare("x", isa::assemble("lddw %r0, map_idx_value(0)+16\nexit"), env), Error);
  EXPECT_THROW(prepare("x", isa::assemble("lddw %r0, btf_id(3)\nexit"), env), Error);
  EXPECT_THROW(prepare("x", isa::assemble("mov %r0, 0"), env), Error);  // verifier
}

TEST(Faults, Names) {
  EXPECT_STREQ(fault_name(Fault::kNone), "none");
  EXPECT_STREQ(fault_name(Fault::kOutOfBounds), "out_of_bounds");
  EXPECT_STREQ(fault_name(Fault::kInsnBudget), "insn_budget");
  EXPECT_STREQ(fault_name(Fault::kCallDepth), "call_depth");
  EXPECT_STREQ(fault_name(Fault::kCtxAccess), "ctx_access");
}

}  // namespace
}  // namespace knod::vm::test
