// ARRAY and PERCPU_ARRAY with the kernel's errnos (kernel/bpf/arraymap.c).
#include <gtest/gtest.h>

#include <cstring>

#include "maps/array.h"
#include "maps/map.h"

using namespace knod::maps;

namespace {
MapPtr array(uint32_t type, uint32_t vs, uint32_t n, uint32_t ncpus = 1, uint32_t flags = 0) {
  return create_map("a", MapDef{type, 4, vs, n, flags}, ncpus);
}
}  // namespace

TEST(ArrayMap, UpdateLookupAndErrnos) {
  MapPtr m = array(BPF_MAP_TYPE_ARRAY, 8, 4);
  uint32_t k = 2;
  uint64_t v = 0x1234, out = 0;
  EXPECT_EQ(m->update(&k, &v, BPF_ANY, 0), 0);
  EXPECT_EQ(m->update(&k, &v, BPF_EXIST, 0), 0);
  EXPECT_EQ(m->update(&k, &v, BPF_NOEXIST, 0), -EEXIST);  // every index exists
  EXPECT_EQ(m->update(&k, &v, 3, 0), -EINVAL);
  EXPECT_EQ(m->update(&k, &v, BPF_F_LOCK, 0), -EINVAL);  // no bpf_spin_lock in the value
  uint32_t big = 4;
  EXPECT_EQ(m->update(&big, &v, BPF_ANY, 0), -E2BIG);
  EXPECT_EQ(m->lookup(&big, 0), nullptr);
  auto* p = static_cast<uint64_t*>(m->lookup(&k, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 0x1234u);
  EXPECT_EQ(m->user_lookup(&k, &out), 0);
  EXPECT_EQ(out, 0x1234u);
  uint32_t k0 = 0;
  EXPECT_EQ(m->user_lookup(&k0, &out), 0);
  EXPECT_EQ(out, 0u);  // zero-initialised
  EXPECT_EQ(m->remove(&k), -EINVAL);
  EXPECT_EQ(m->user_lookup(&big, &out), -ENOENT);
  // value pointers lie inside the one pool
  auto pools = m->value_pools();
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].bytes, 4u * 8u);
  EXPECT_GE((uint8_t*)p, (uint8_t*)pools[0].base);
  EXPECT_LT((uint8_t*)p, (uint8_t*)pools[0].base + pools[0].bytes);
}

TEST(ArrayMap, GetNextKey) {
  MapPtr m = array(BPF_MAP_TYPE_ARRAY, 4, 3);
  uint32_t next = 99, k;
  EXPECT_EQ(m->get_next_key(nullptr, &next), 0);
  EXPECT_EQ(next, 0u);
  k = 0;
  EXPECT_EQ(m->get_next_key(&k, &next), 0);
  EXPECT_EQ(next, 1u);
  k = 2;
  EXPECT_EQ(m->get_next_key(&k, &next), -ENOENT);
  k = 77;  // out of range -> first
  EXPECT_EQ(m->get_next_key(&k, &next), 0);
  EXPECT_EQ(next, 0u);
}

TEST(ArrayMap, PerCpuSlots) {
  MapPtr m = array(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 2, 3);
  EXPECT_EQ(m->user_value_size(), 3u * 8u);  // ncpus * round_up(4, 8)
  uint32_t k = 1, v = 5;
  EXPECT_EQ(m->update(&k, &v, BPF_ANY, 2), 0);
  uint32_t* c2 = static_cast<uint32_t*>(m->lookup(&k, 2));
  uint32_t* c0 = static_cast<uint32_t*>(m->lookup(&k, 0));
  ASSERT_TRUE(c2 && c0);
  EXPECT_EQ(*c2, 5u);
  EXPECT_EQ(*c0, 0u);
  uint8_t all[24];
  EXPECT_EQ(m->user_lookup(&k, all), 0);
  uint32_t got[3];
  for (int c = 0; c < 3; ++c) memcpy(&got[c], all + 8 * c, 4);
  EXPECT_EQ(got[0], 0u);
  EXPECT_EQ(got[2], 5u);
  uint8_t in[24] = {};
  uint32_t seven = 7;
  memcpy(in + 8, &seven, 4);
  EXPECT_EQ(m->user_update(&k, in, BPF_ANY), 0);
  EXPECT_EQ(*static_cast<uint32_t*>(m->lookup(&k, 1)), 7u);
  EXPECT_EQ(*static_cast<uint32_t*>(m->lookup(&k, 2)), 0u);
}

// Workers counting into a small per-CPU map must not write one cache line: each CPU's values
// are followed by at least 64 unused bytes (the kernel's per-CPU areas are apart, too).
TEST(ArrayMap, PerCpuValuesOfDifferentCpusShareNoCacheLine) {
  for (uint32_t vs : {4u, 16u, 24u, 100u}) {
    MapPtr m = array(BPF_MAP_TYPE_PERCPU_ARRAY, vs, 2, 4);
    auto* a = static_cast<ArrayMap*>(m.get());
    for (uint32_t c = 0; c + 1 < 4; ++c) {
      const uint8_t* last = a->at(1, c) + vs;  // one past CPU c's last value
      const uint8_t* next = a->at(0, c + 1);
      EXPECT_GE(next - last, 64) << "value_size " << vs << " cpu " << c;
      EXPECT_EQ((next - a->values()) % a->stride(), 0);
    }
    EXPECT_EQ(a->at(0, 4), nullptr);
  }
  // One CPU, or not per-CPU: no gap (the value pool is exactly max_entries values).
  MapPtr one = array(BPF_MAP_TYPE_PERCPU_ARRAY, 8, 3, 1);
  EXPECT_EQ(static_cast<ArrayMap*>(one.get())->cpu_slots(), 3u);
}

TEST(ArrayMap, ReadOnlyProg) {
  EXPECT_TRUE(array(BPF_MAP_TYPE_ARRAY, 4, 1, 1, BPF_F_RDONLY_PROG)->prog_readonly());
  EXPECT_FALSE(array(BPF_MAP_TYPE_ARRAY, 4, 1)->prog_readonly());
}
