// HASH family semantics (kernel/bpf/hashtab.c), LRU eviction, and concurrent program-side use.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "base/error.h"
#include "maps/hash.h"
#include "maps/jhash.h"
#include "maps/lru_list.h"

using namespace knod::maps;

TEST(Jhash, KnownValues) {
  // lookup3 reference values (Bob Jenkins' driver5 in lookup3.c): hashlittle("", 0, 0) =
  // 0xdeadbeef; hashlittle("Four score and seven years ago", 30, 0) = 0x17770551.
  EXPECT_EQ(jhash("", 0, 0), 0xdeadbeefu);
  EXPECT_EQ(jhash("Four score and seven years ago", 30, 0), 0x17770551u);
  EXPECT_EQ(jhash("Four score and seven years ago", 30, 1), 0xcd628161u);
  // jhash2 over whole words equals jhash over the same bytes (little-endian host).
  uint32_t w[3] = {1, 2, 3};
  EXPECT_EQ(jhash2(w, 3, 7), jhash(w, 12, 7));
}

TEST(HashMap, FlagsAndErrnos) {
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_HASH, 4, 8, 2}, 1);
  uint32_t k1 = 1, k2 = 2, k3 = 3;
  uint64_t v = 10, out;
  EXPECT_EQ(m->update(&k1, &v, BPF_EXIST, 0), -ENOENT);
  EXPECT_EQ(m->update(&k1, &v, BPF_NOEXIST, 0), 0);
  EXPECT_EQ(m->update(&k1, &v, BPF_NOEXIST, 0), -EEXIST);
  v = 11;
  EXPECT_EQ(m->update(&k1, &v, BPF_EXIST, 0), 0);
  EXPECT_EQ(m->update(&k2, &v, BPF_ANY, 0), 0);
  EXPECT_EQ(m->update(&k3, &v, BPF_ANY, 0), -E2BIG);  // full
  EXPECT_EQ(m->update(&k1, &v, BPF_ANY, 0), 0);       // replacing still works when full
  EXPECT_EQ(m->update(&k3, &v, 4, 0), -EINVAL);
  EXPECT_EQ(m->user_lookup(&k1, &out), 0);
  EXPECT_EQ(out, 11u);
  EXPECT_EQ(m->user_lookup(&k3, &out), -ENOENT);
  EXPECT_EQ(m->lookup(&k3, 0), nullptr);
  EXPECT_EQ(m->remove(&k3), -ENOENT);
  EXPECT_EQ(m->remove(&k1), 0);
  EXPECT_EQ(m->update(&k3, &v, BPF_ANY, 0), 0);  // room again
}

TEST(HashMap, GetNextKeyVisitsEveryKeyOnce) {
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_HASH, 4, 4, 100}, 1);
  for (uint32_t k = 0; k < 50; ++k) ASSERT_EQ(m->update(&k, &k, BPF_ANY, 0), 0);
  std::set<uint32_t> seen;
  uint32_t cur, next;
  long r = m->get_next_key(nullptr, &next);
  while (r == 0) {
    EXPECT_TRUE(seen.insert(next).second);
    cur = next;
    r = m->get_next_key(&cur, &next);
  }
  EXPECT_EQ(r, -ENOENT);
  EXPECT_EQ(seen.size(), 50u);
  uint32_t absent = 1000, first;
  ASSERT_EQ(m->get_next_key(nullptr, &first), 0);
  ASSERT_EQ(m->get_next_key(&absent, &next), 0);  // absent key -> first key
  EXPECT_EQ(next, first);
}

TEST(HashMap, PerCpuNewElementZeroesOtherCpus) {
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 8}, 4);
  EXPECT_EQ(m->user_value_size(), 32u);
  uint32_t k = 9, v = 77;
  ASSERT_EQ(m->update(&k, &v, BPF_ANY, 3), 0);
  uint8_t all[32];
  ASSERT_EQ(m->user_lookup(&k, all), 0);
  uint32_t c;
  for (int i = 0; i < 4; ++i) {
    memcpy(&c, all + 8 * i, 4);
    EXPECT_EQ(c, i == 3 ? 77u : 0u);
  }
  EXPECT_EQ(*static_cast<uint32_t*>(m->lookup(&k, 3)), 77u);
}

// Per-CPU values are CPU-major (the kernel's per-CPU areas): one key's values of two CPUs are
// a whole block of max_entries values apart, not adjacent in one cache line, and the user
// view (all CPUs, round_up(value_size, 8) each) gathers them in CPU order.
TEST(HashMap, PerCpuValuesOfOneKeyAreCacheLinesApart) {
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 16}, 2);
  auto* h = static_cast<HashMap*>(m.get());
  uint32_t k = 5, a = 11, b = 22;
  ASSERT_EQ(m->update(&k, &a, BPF_ANY, 0), 0);
  ASSERT_EQ(m->update(&k, &b, BPF_ANY, 1), 0);
  auto* v0 = static_cast<uint8_t*>(m->lookup(&k, 0));
  auto* v1 = static_cast<uint8_t*>(m->lookup(&k, 1));
  ASSERT_NE(v0, nullptr);
  EXPECT_EQ(uint64_t(v1 - v0), h->cpu_block());
  EXPECT_GE(h->cpu_block(), 16u * 8);
  uint8_t all[16];
  ASSERT_EQ(m->user_lookup(&k, all), 0);
  uint32_t got[2];
  memcpy(&got[0], all, 4);
  memcpy(&got[1], all + 8, 4);
  EXPECT_EQ(got[0], 11u);
  EXPECT_EQ(got[1], 22u);
  const uint64_t both[2] = {7, 8};  // user update: both CPUs' slots from one buffer
  ASSERT_EQ(m->user_update(&k, both, BPF_EXIST), 0);
  EXPECT_EQ(*reinterpret_cast<uint32_t*>(v0), 7u);
  EXPECT_EQ(*reinterpret_cast<uint32_t*>(v1), 8u);
}

TEST(HashMap, LruEvictsInsteadOfFailing) {
  MapPtr m = create_map("l", MapDef{BPF_MAP_TYPE_LRU_HASH, 4, 4, 4}, 1);
  auto* h = static_cast<HashMap*>(m.get());
  for (uint32_t k = 0; k < 4; ++k) ASSERT_EQ(m->update(&k, &k, BPF_ANY, 0), 0);
  uint32_t hot = 0;
  ASSERT_NE(m->lookup(&hot, 0), nullptr);  // key 0 is referenced: gets a second chance
  uint32_t k4 = 4;
  EXPECT_EQ(m->update(&k4, &k4, BPF_ANY, 0), 0);  // a HASH would say -E2BIG
  EXPECT_EQ(h->count(), 4u);
  EXPECT_NE(m->lookup(&k4, 0), nullptr);
  EXPECT_NE(m->lookup(&hot, 0), nullptr);
  uint32_t k1 = 1;
  EXPECT_EQ(m->lookup(&k1, 0), nullptr);  // the coldest unreferenced key went
  for (uint32_t k = 10; k < 100; ++k) {
    ASSERT_EQ(m->update(&k, &k, BPF_NOEXIST, 0), 0);
    EXPECT_LE(h->count(), 4u);
    EXPECT_NE(m->lookup(&k, 0), nullptr);
  }
  EXPECT_THROW(create_map("l", MapDef{BPF_MAP_TYPE_LRU_HASH, 4, 4, 4, BPF_F_NO_PREALLOC}, 1),
               knod::Error);
}

TEST(HashMap, ConcurrentProgramSideUse) {
  // 4 workers each insert and bump their own 500 keys and look up everyone's: the table
  // ends with exactly 2000 keys and each counter equals what its owner wrote.
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_HASH, 4, 8, 2048}, 4);
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (uint32_t t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (uint32_t i = 0; i < 500; ++i) {
          uint32_t k = t * 1000 + i;
          uint64_t v = uint64_t(round) * 100000 + k;
          if (m->update(&k, &v, BPF_ANY, t) != 0) bad++;
          uint32_t other = ((t + 1) % 4) * 1000 + i;
          m->lookup(&other, t);
          auto* p = static_cast<uint64_t*>(m->lookup(&k, t));
          if (!p || *p % 100000 != k) bad++;
          if (round == 1 && (i % 5) == 0 && m->remove(&k) != 0) bad++;
        }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(static_cast<HashMap*>(m.get())->count(), 2000u);
  for (uint32_t t = 0; t < 4; ++t)
    for (uint32_t i = 0; i < 500; ++i) {
      uint32_t k = t * 1000 + i;
      uint64_t v = 0;
      ASSERT_EQ(m->user_lookup(&k, &v), 0);
      EXPECT_EQ(v, 200000u + k);
    }
}

// Lock-free lookups (HashTable::find, the kernel's lookup_nulls_elem_raw). A reader walks
// bucket X past a churned element at its head while another thread deletes that element and
// re-inserts it (the free list hands the same element back at once) for a key of bucket Y:
// the reader lands in Y's list and must start over, not report the stable key of X missing.
// Also: a key that was never inserted is never found, a found key has its own value.
TEST(HashMap, LookupsDuringChurnNeverMissAStableKey) {
  constexpr uint32_t kMax = 16, kBuckets = 16;
  auto bucket = [](uint32_t k) { return htab_hash(&k, 4, 0) & (kBuckets - 1); };
  const uint32_t stable = 7, x = bucket(stable);
  uint32_t same = 1000, other = 2000;  // a churned key in bucket X, one in another bucket
  while (bucket(same) != x) ++same;
  while (bucket(other) == x) ++other;
  for (uint32_t type : {BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_LRU_HASH}) {
    MapPtr m = create_map("h", MapDef{type, 4, 8, kMax}, 2);
    uint64_t v = 21;
    ASSERT_EQ(m->update(&stable, &v, BPF_ANY, 0), 0);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      uint64_t w = 1;
      while (!stop.load(std::memory_order_relaxed)) {
        EXPECT_EQ(m->update(&same, &w, BPF_ANY, 1), 0);  // at the head of X, before `stable`
        EXPECT_EQ(m->remove(&same), 0);
        EXPECT_EQ(m->update(&other, &w, BPF_ANY, 1), 0);  // the same element, now in Y
        EXPECT_EQ(m->remove(&other), 0);
      }
    });
    uint64_t misses = 0, wrong = 0, phantom = 0;
    const uint32_t absent = 3000;
    for (uint32_t i = 0; i < 3'000'000; ++i) {
      auto* p = static_cast<uint64_t*>(m->lookup(&stable, 0));
      if (!p)
        ++misses;
      else if (*p != 21)
        ++wrong;
      if (i % 64 == 0 && m->lookup(&absent, 0)) ++phantom;
    }
    stop = true;
    writer.join();
    EXPECT_EQ(misses, 0u) << type;
    EXPECT_EQ(wrong, 0u) << type;
    EXPECT_EQ(phantom, 0u) << type;
  }
}

// Replacing the value of a present key (BPF_EXIST / BPF_ANY) while other CPUs look it up:
// the kernel links the new element at the head before unlinking the old one
// (htab_map_update_elem), so a lookup never misses; the value seen is the old or the new one.
// The new element is at the head of its bucket afterwards (get_next_key order).
TEST(HashMap, ReplacingAValueNeverHidesTheKey) {
  for (uint32_t type : {BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_LRU_HASH}) {
    MapPtr m = create_map("h", MapDef{type, 4, 8, 4}, 2);
    const uint32_t key = 7;
    uint64_t v = 1;
    ASSERT_EQ(m->update(&key, &v, BPF_ANY, 0), 0);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      uint64_t w = 1;
      while (!stop.load(std::memory_order_relaxed)) {
        w = w % 1000 + 1;
        EXPECT_EQ(m->update(&key, &w, w % 2 ? BPF_EXIST : BPF_ANY, 1), 0);
      }
    });
    uint64_t misses = 0, bad = 0;
    for (uint32_t i = 0; i < 2'000'000; ++i) {
      auto* p = static_cast<const volatile uint64_t*>(m->lookup(&key, 0));
      if (!p)
        ++misses;
      else if (*p < 1 || *p > 1000)
        ++bad;
    }
    stop = true;
    writer.join();
    EXPECT_EQ(misses, 0u) << type;
    EXPECT_EQ(bad, 0u) << type;
    EXPECT_EQ(static_cast<HashMap*>(m.get())->count(), 1u);  // spares are not entries
  }
}

// With more concurrent writers than spares (one per CPU plus one), replacing still works
// (in place) and the map never exceeds max_entries.
TEST(HashMap, ReplaceFromManyThreadsKeepsOneEntryPerKey) {
  MapPtr m = create_map("h", MapDef{BPF_MAP_TYPE_HASH, 4, 8, 8}, 1);
  std::vector<std::thread> ts;
  for (uint32_t t = 0; t < 6; ++t)
    ts.emplace_back([&, t] {
      for (uint64_t i = 0; i < 20000; ++i) {
        uint32_t k = uint32_t(i % 8);
        uint64_t v = i * 10 + t;
        EXPECT_EQ(m->update(&k, &v, BPF_ANY, 0), 0);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(static_cast<HashMap*>(m.get())->count(), 8u);
  std::set<uint32_t> keys;
  uint32_t k, next;
  for (long r = m->get_next_key(nullptr, &next); r == 0; r = m->get_next_key(&k, &next))
    keys.insert(k = next);
  EXPECT_EQ(keys.size(), 8u);
}

// The kernel's common LRU keeps a key that is looked up on every packet in its active list:
// it survives the cold keys that come and go. The program of a review (on 246 packets the
// kernel kept the hot key, knod's former second-chance list evicted it after 8): per packet,
// look up key 0 (insert on a miss), look up key 1 + len % 11 (insert on a miss), 4 entries.
TEST(HashMap, LruHotKeySurvivesColdInserts) {
  for (uint32_t type : {BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH}) {
    MapPtr m = create_map("l", MapDef{type, 4, 8, 4}, 1);
    uint32_t hot_inserts = 0, x = 12345;
    for (uint32_t pkt = 0; pkt < 5000; ++pkt) {
      x = x * 1103515245 + 12345;  // packet lengths
      const uint32_t hot = 0, cold = 1 + (x >> 16) % 11;
      uint64_t v = 1;
      if (!m->lookup(&hot, 0)) {
        ASSERT_EQ(m->update(&hot, &v, BPF_ANY, 0), 0);
        ++hot_inserts;
      }
      if (!m->lookup(&cold, 0)) {
        ASSERT_EQ(m->update(&cold, &v, BPF_ANY, 0), 0);
      }
      ASSERT_LE(static_cast<HashMap*>(m.get())->count(), 4u);
    }
    EXPECT_EQ(hot_inserts, 1u) << type;
    // Without lookups every key is cold: the oldest go first.
    MapPtr c = create_map("c", MapDef{type, 4, 8, 4}, 1);
    uint64_t v = 1;
    for (uint32_t k = 0; k < 6; ++k) ASSERT_EQ(c->update(&k, &v, BPF_ANY, 0), 0);
    for (uint32_t k = 0; k < 6; ++k) EXPECT_EQ(c->lookup(&k, 0) != nullptr, k >= 2) << k;
  }
}

TEST(LruLists, RotationAndForcedShrink) {
  std::atomic<uint8_t> ref[6] = {};
  LruLists l(6);
  for (uint32_t e = 0; e < 4; ++e) l.add(e);  // inactive: 3 2 1 0 (head first)
  ref[0] = 1;
  ref[1] = 1;
  // Inactive tail 0 and 1 are referenced: promoted (bytes cleared); 2 is the victim.
  EXPECT_EQ(l.victim(ref), 2u);
  EXPECT_TRUE(l.is_active(0));
  EXPECT_TRUE(l.is_active(1));
  EXPECT_EQ(ref[0].load() + ref[1].load(), 0);
  EXPECT_EQ(l.active(), 2u);
  EXPECT_EQ(l.inactive(), 1u);
  // Inactive (1) < active (2): the active tail rotates; 0 unreferenced is demoted, 1
  // referenced stays. Then the inactive tail, 3, is the victim.
  ref[1] = 1;
  EXPECT_EQ(l.victim(ref), 3u);
  EXPECT_TRUE(l.is_active(1));
  EXPECT_FALSE(l.is_active(0));
  // Everything referenced: the scan promotes, nothing is free, the forced shrink takes the
  // active tail.
  ref[0] = ref[1] = 1;
  uint32_t v = l.victim(ref);
  EXPECT_TRUE(v == 0 || v == 1) << v;
  l.remove(v == 0 ? 1 : 0);
  EXPECT_EQ(l.victim(ref), LruLists::kNil);
}
