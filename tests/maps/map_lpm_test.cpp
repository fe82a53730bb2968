// LPM_TRIE (kernel/bpf/lpm_trie.c): longest-prefix lookup, exact update/delete, post-order
// get_next_key (the kernel comment's example: 192.168.0.0/24, 192.168.1.0/24,
// 192.168.128.0/24, 192.168.0.0/16).
#include <gtest/gtest.h>

#include <cstring>

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
