// LPM_TRIE (kernel/bpf/lpm_trie.c): longest-prefix lookup, exact update/delete, post-order
// get_next_key (the kernel comment's example: 192.168.0.0/24, 192.168.1.0/24,
// 192.168.128.0/24, 192.168.0.0/16).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include "base/error.h"
#include "maps/map.h"

using namespace knod::maps;

namespace {
struct Key {
  uint32_t prefixlen;
  uint8_t a[4];
};
Key key(uint32_t plen, uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return {plen, {a, b, c, d}};
}
MapPtr trie(uint32_t n = 16) {
  return create_map("t", MapDef{BPF_MAP_TYPE_LPM_TRIE, 8, 4, n, BPF_F_NO_PREALLOC}, 1);
}
uint32_t val(Map& m, Key k) {
  auto* p = static_cast<uint32_t*>(m.lookup(&k, 0));
  return p ? *p : 0xffffffff;
}
}  // namespace

TEST(LpmTrie, LongestPrefixMatch) {
  MapPtr m = trie();
  uint32_t v16 = 16, v24 = 24, v0 = 0;
  Key k16 = key(16, 192, 168, 0, 0), k24 = key(24, 192, 168, 1, 0), k0 = key(0, 0, 0, 0, 0);
  ASSERT_EQ(m->update(&k16, &v16, BPF_ANY, 0), 0);
  ASSERT_EQ(m->update(&k24, &v24, BPF_ANY, 0), 0);
  EXPECT_EQ(val(*m, key(32, 192, 168, 1, 7)), 24u);
  EXPECT_EQ(val(*m, key(32, 192, 168, 2, 7)), 16u);
  EXPECT_EQ(val(*m, key(32, 10, 0, 0, 1)), 0xffffffffu);
  EXPECT_EQ(val(*m, key(20, 192, 168, 1, 7)), 16u);          // lookup prefixlen caps the match
  EXPECT_EQ(val(*m, key(33, 192, 168, 1, 7)), 0xffffffffu);  // prefixlen > 32: no match
  ASSERT_EQ(m->update(&k0, &v0, BPF_ANY, 0), 0);
  EXPECT_EQ(val(*m, key(32, 10, 0, 0, 1)), 0u);  // default route
}

TEST(LpmTrie, ExactUpdateDeleteAndErrnos) {
  MapPtr m = trie(2);
  uint32_t v = 1;
  Key a = key(24, 10, 1, 2, 0), b = key(16, 10, 1, 0, 0), c = key(8, 10, 0, 0, 0);
  EXPECT_EQ(m->update(&a, &v, BPF_EXIST, 0), -ENOENT);
  EXPECT_EQ(m->update(&a, &v, BPF_NOEXIST, 0), 0);
  EXPECT_EQ(m->update(&a, &v, BPF_NOEXIST, 0), -EEXIST);
  Key a_other_host = key(24, 10, 1, 2, 99);  // same /24: exact match
  EXPECT_EQ(m->update(&a_other_host, &v, BPF_NOEXIST, 0), -EEXIST);
  EXPECT_EQ(m->update(&b, &v, BPF_ANY, 0), 0);
  EXPECT_EQ(m->update(&c, &v, BPF_ANY, 0), -ENOSPC);  // full
  Key bad = key(33, 0, 0, 0, 0);
  EXPECT_EQ(m->update(&bad, &v, BPF_ANY, 0), -EINVAL);
  EXPECT_EQ(m->remove(&bad), -EINVAL);
  EXPECT_EQ(m->update(&a, &v, 3, 0), -EINVAL);
  EXPECT_EQ(m->remove(&c), -ENOENT);
  Key a25 = key(25, 10, 1, 2, 0);
  EXPECT_EQ(m->remove(&a25), -ENOENT);  // delete is exact, not longest-prefix
  EXPECT_EQ(m->remove(&a), 0);
  EXPECT_EQ(m->update(&c, &v, BPF_ANY, 0), 0);
}

TEST(LpmTrie, GetNextKeyPostOrder) {
  MapPtr m = trie();
  uint32_t v = 0;
  Key ks[] = {key(16, 192, 168, 0, 0), key(24, 192, 168, 128, 0), key(24, 192, 168, 0, 0),
              key(24, 192, 168, 1, 0)};
  for (Key& k : ks) ASSERT_EQ(m->update(&k, &v, BPF_ANY, 0), 0);
  std::vector<std::pair<uint32_t, int>> order;
  Key cur, next;
  long r = m->get_next_key(nullptr, &next);
  while (r == 0) {
    order.push_back({next.prefixlen, next.a[2]});
    cur = next;
    r = m->get_next_key(&cur, &next);
  }
  EXPECT_EQ(r, -ENOENT);
  std::vector<std::pair<uint32_t, int>> want = {{24, 0}, {24, 1}, {24, 128}, {16, 0}};
  EXPECT_EQ(order, want);
  Key absent = key(20, 1, 2, 3, 4);
  ASSERT_EQ(m->get_next_key(&absent, &next), 0);  // absent -> leftmost
  EXPECT_EQ(next.prefixlen, 24u);
  EXPECT_EQ(next.a[2], 0);
}

TEST(LpmTrie, InvalidDefinitions) {
  EXPECT_THROW(create_map("t", MapDef{BPF_MAP_TYPE_LPM_TRIE, 8, 4, 16, 0}, 1), knod::Error);
  EXPECT_THROW(create_map("t", MapDef{BPF_MAP_TYPE_LPM_TRIE, 4, 4, 16, BPF_F_NO_PREALLOC}, 1),
               knod::Error);
  EXPECT_THROW(create_map("t", MapDef{BPF_MAP_TYPE_LPM_TRIE, 8, 0, 16, BPF_F_NO_PREALLOC}, 1),
               knod::Error);
}

// Random updates/deletes on a 1-byte key (prefixes /0../8) against a brute-force model: every
// errno, every longest-prefix lookup of all 256 /8 keys and of shorter keys, and a full
// get_next_key walk after each step.
TEST(LpmTrie, RandomOpsMatchBruteForce) {
  struct K1 {
    uint32_t prefixlen;
    uint8_t b;
  } __attribute__((packed));
  const uint32_t cap = 24;
  MapPtr m = create_map("t", MapDef{BPF_MAP_TYPE_LPM_TRIE, 5, 4, cap, BPF_F_NO_PREALLOC}, 1);
  auto mask = [](uint32_t p, uint8_t b) { return p == 0 ? 0 : uint8_t(b & (0xff << (8 - p))); };
  std::map<std::pair<uint32_t, uint8_t>, uint32_t> model;  // (prefixlen, masked byte) -> value
  std::mt19937 rng(12345);
  auto pool = m->value_pools()[0];
  for (int step = 0; step < 4000; ++step) {
    K1 k{uint32_t(rng() % 9), uint8_t(rng())};
    auto id = std::make_pair(uint32_t(k.prefixlen), mask(k.prefixlen, k.b));
    bool has = model.count(id) != 0;
    uint32_t v = uint32_t(step);
    if (rng() % 3 == 0) {
      ASSERT_EQ(m->remove(&k), has ? 0 : -ENOENT) << step;
      model.erase(id);
    } else {
      uint64_t flags = rng() % 3;
      long want = 0;
      if (has && flags == BPF_NOEXIST)
        want = -EEXIST;
      else if (!has && flags == BPF_EXIST)
        want = -ENOENT;
      else if (!has && model.size() == cap)
        want = -ENOSPC;
      ASSERT_EQ(m->update(&k, &v, flags, 0), want) << step;
      if (want == 0) model[id] = v;
    }
    for (uint32_t p = 0; p <= 8; p += 4)
      for (uint32_t b = 0; b < 256; ++b) {
        K1 q{p, uint8_t(b)};
        const uint32_t* want = nullptr;
        for (int l = int(p); l >= 0 && !want; --l) {
          auto it = model.find({uint32_t(l), mask(uint32_t(l), uint8_t(b))});
          if (it != model.end()) want = &it->second;
        }
        auto* got = static_cast<const uint8_t*>(m->lookup(&q, 0));
        ASSERT_EQ(got != nullptr, want != nullptr) << step << " /" << p << " " << b;
        if (!got) continue;
        ASSERT_GE(got, static_cast<const uint8_t*>(pool.base));
        ASSERT_LT(got, static_cast<const uint8_t*>(pool.base) + pool.bytes);
        uint32_t gv;
        std::memcpy(&gv, got, 4);
        ASSERT_EQ(gv, *want) << step << " /" << p << " " << b;
      }
    size_t walked = 0;
    K1 cur, next;
    for (long r = m->get_next_key(nullptr, &next); r == 0; r = m->get_next_key(&cur, &next)) {
      ASSERT_EQ(model.count({uint32_t(next.prefixlen), mask(next.prefixlen, next.b)}), 1u);
      cur = next;
      ASSERT_LE(++walked, model.size());
    }
    ASSERT_EQ(walked, model.size()) << step;
  }
}

// Lock-free lookups while another thread inserts and deletes unrelated prefixes: readers must
// always see the stable prefixes' values.
TEST(LpmTrie, LookupsDuringUpdates) {
  MapPtr m = trie(64);
  uint32_t v8 = 8, v16 = 16;
  Key k8 = key(8, 10, 0, 0, 0), k16 = key(16, 10, 1, 0, 0);
  ASSERT_EQ(m->update(&k8, &v8, BPF_ANY, 0), 0);
  ASSERT_EQ(m->update(&k16, &v16, BPF_ANY, 0), 0);
  std::atomic<bool> done{false};
  std::atomic<long> wrong{0}, lookups{0};
  auto reader = [&] {
    long n = 0, bad = 0;
    while (!done.load(std::memory_order_relaxed) || n < 1000) {
      bad += val(*m, key(32, 10, 1, 2, 3)) != 16;
      bad += val(*m, key(32, 10, 2, 3, 4)) != 8;
      bad += val(*m, key(32, 11, 0, 0, 1)) != 0xffffffffu;
      ++n;
    }
    wrong += bad;
    lookups += n;
  };
  std::thread r1(reader), r2(reader);
  std::mt19937 rng(7);
  uint32_t v = 1;
  for (int i = 0; i < 20000; ++i) {
    Key c = key(16 + rng() % 17, uint8_t(rng() % 2 ? 10 : 192), uint8_t(rng() % 4 + 4),
                uint8_t(rng()), uint8_t(rng()));
    if (rng() % 2)
      m->update(&c, &v, BPF_ANY, 0);
    else
      m->remove(&c);
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(lookups.load(), 2000);
}
