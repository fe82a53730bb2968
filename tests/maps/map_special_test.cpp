// PROG_ARRAY, DEVMAP(_HASH), CPUMAP, XSKMAP, PERF_EVENT_ARRAY, RINGBUF, ARRAY/HASH_OF_MAPS.
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "maps/cpumap.h"
#include "maps/devmap.h"
#include "maps/map_in_map.h"
#include "maps/perf_event_array.h"
#include "maps/prog_array.h"
#include "maps/ringbuf.h"
#include "maps/xskmap.h"

using namespace knod::maps;

TEST(ProgArray, IndicesAndFdArrayErrnos) {
  MapPtr m = create_map("p", MapDef{BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4}, 1);
  auto* pa = static_cast<ProgArray*>(m.get());
  uint32_t k = 1, prog = 7, out;
  EXPECT_EQ(pa->get(1), -1);
  EXPECT_EQ(m->user_update(&k, &prog, BPF_NOEXIST), -EINVAL);  // fd arrays take BPF_ANY only
  EXPECT_EQ(m->user_update(&k, &prog, BPF_ANY), 0);
  EXPECT_EQ(pa->get(1), 7);
  EXPECT_EQ(m->user_lookup(&k, &out), 0);
  EXPECT_EQ(out, 7u);
  uint32_t big = 4;
  EXPECT_EQ(m->user_update(&big, &prog, BPF_ANY), -E2BIG);
  EXPECT_EQ(m->remove(&big), -E2BIG);
  EXPECT_EQ(m->lookup(&k, 0), nullptr);  // programs only tail-call
  EXPECT_EQ(m->remove(&k), 0);
  EXPECT_EQ(m->remove(&k), -ENOENT);
  EXPECT_EQ(pa->get(1), -1);
  EXPECT_EQ(pa->get(100), -1);
}

TEST(DevMap, ArrayVariant) {
  MapPtr m = create_map("d", MapDef{BPF_MAP_TYPE_DEVMAP, 4, 8, 4}, 1);
  auto* d = static_cast<DevMap*>(m.get());
  EXPECT_TRUE(m->prog_readonly());
  bpf_devmap_val v{};
  v.ifindex = 3;
  uint32_t k = 2, big = 4;
  EXPECT_EQ(m->user_update(&k, &v, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(m->user_update(&big, &v, BPF_ANY), -E2BIG);
  EXPECT_EQ(m->user_update(&k, &v, BPF_ANY), 0);
  ASSERT_NE(d->get(2), nullptr);
  EXPECT_EQ(d->get(2)->ifindex, 3u);
  EXPECT_EQ(d->get(1), nullptr);
  auto* p = static_cast<bpf_devmap_val*>(m->lookup(&k, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ifindex, 3u);
  v.bpf_prog.fd = 5;
  EXPECT_EQ(m->user_update(&k, &v, BPF_ANY), -EOPNOTSUPP);
  v = {};
  EXPECT_EQ(m->user_update(&k, &v, BPF_ANY), 0);  // ifindex 0 clears
  EXPECT_EQ(d->get(2), nullptr);
  EXPECT_EQ(m->remove(&big), -EINVAL);
  EXPECT_EQ(m->remove(&k), 0);
}

TEST(DevMap, HashVariant) {
  MapPtr m = create_map("d", MapDef{BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 2}, 1);
  auto* d = static_cast<DevMap*>(m.get());
  uint32_t k1 = 100, k2 = 200, k3 = 300, ifx = 7, zero = 0;
  EXPECT_EQ(m->user_update(&k1, &zero, BPF_ANY), -EINVAL);
  EXPECT_EQ(m->user_update(&k1, &ifx, BPF_ANY), 0);
  EXPECT_EQ(m->user_update(&k1, &ifx, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(m->user_update(&k2, &ifx, BPF_EXIST), 0);  // the kernel inserts here too
  EXPECT_EQ(m->user_update(&k3, &ifx, BPF_ANY), -E2BIG);
  EXPECT_EQ(d->get(200)->ifindex, 7u);
  EXPECT_EQ(m->remove(&k3), -ENOENT);
  EXPECT_EQ(m->remove(&k1), 0);
  EXPECT_EQ(d->get(100), nullptr);
}

TEST(CpuMap, QsizeAndCpus) {
  MapPtr m = create_map("c", MapDef{BPF_MAP_TYPE_CPUMAP, 4, 4, 4}, 2);
  auto* c = static_cast<CpuMap*>(m.get());
  uint32_t k0 = 0, k3 = 3, k9 = 9, q = 192, big = 20000, zero = 0, out;
  EXPECT_EQ(m->user_update(&k0, &q, BPF_ANY), 0);
  EXPECT_EQ(c->get(0)->qsize, 192u);
  EXPECT_EQ(m->user_update(&k3, &q, BPF_ANY), -ENODEV);  // CPU 3 of 2
  EXPECT_EQ(m->user_update(&k9, &q, BPF_ANY), -E2BIG);
  EXPECT_EQ(m->user_update(&k0, &big, BPF_ANY), -EOVERFLOW);
  EXPECT_EQ(m->user_update(&k0, &q, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(m->user_lookup(&k0, &out), 0);
  EXPECT_EQ(out, 192u);
  EXPECT_EQ(m->lookup(&k0, 0), nullptr);
  EXPECT_EQ(m->user_update(&k0, &zero, BPF_ANY), 0);
  EXPECT_EQ(c->get(0), nullptr);
  EXPECT_EQ(m->remove(&k9), -EINVAL);
}

TEST(XskMap, Sockets) {
  MapPtr m = create_map("x", MapDef{BPF_MAP_TYPE_XSKMAP, 4, 4, 2}, 1);
  auto* x = static_cast<XskMap*>(m.get());
  uint32_t k = 1, s = 42, out;
  EXPECT_EQ(m->user_update(&k, &s, BPF_EXIST), -ENOENT);
  EXPECT_EQ(m->user_update(&k, &s, BPF_NOEXIST), 0);
  EXPECT_EQ(m->user_update(&k, &s, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(x->get(1), 42);
  EXPECT_EQ(x->get(0), -1);
  EXPECT_NE(m->lookup(&k, 0), nullptr);
  EXPECT_EQ(m->user_lookup(&k, &out), -EOPNOTSUPP);
  EXPECT_EQ(m->remove(&k), 0);
  EXPECT_EQ(x->get(1), -1);
}

TEST(PerfEventArray, RecordsPerSlot) {
  MapDef def{BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 2};
  PerfEventArray pe("p", def, 64);
  uint32_t a = 0xaabbccdd;
  const char extra[3] = {'x', 'y', 'z'};
  EXPECT_EQ(pe.output(BPF_F_CURRENT_CPU, 1, &a, 4, extra, 3), 0);
  EXPECT_EQ(pe.output(0, 1, &a, 4), 0);
  EXPECT_EQ(pe.output(2, 0, &a, 4), -E2BIG);
  EXPECT_EQ(pe.output(1ull << 60, 0, &a, 4), -EINVAL);
  char big[100] = {};
  EXPECT_EQ(pe.output(0, 0, big, 100), -ENOSPC);
  EXPECT_EQ(pe.lost(), 1u);
  std::vector<std::pair<uint32_t, std::string>> got;
  EXPECT_EQ(pe.drain([&](uint32_t slot, const uint8_t* d, uint32_t n) {
    got.push_back({slot, std::string(reinterpret_cast<const char*>(d), n)});
  }),
            2u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, 0u);
  EXPECT_EQ(got[0].second, std::string("\xdd\xcc\xbb\xaa", 4));
  EXPECT_EQ(got[1].first, 1u);
  EXPECT_EQ(got[1].second, std::string("\xdd\xcc\xbb\xaaxyz", 7));
  EXPECT_EQ(pe.drain([](uint32_t, const uint8_t*, uint32_t) {}), 0u);
}

TEST(RingBuf, ReserveSubmitDiscardAndWrap) {
  MapPtr m = create_map("r", MapDef{BPF_MAP_TYPE_RINGBUF, 0, 0, 4096}, 1);
  auto* rb = static_cast<RingBuf*>(m.get());
  EXPECT_EQ(rb->reserve(8, 1), nullptr);     // flags must be 0
  EXPECT_EQ(rb->reserve(4096, 0), nullptr);  // larger than the ring
  void* a = rb->reserve(5, 0);
  void* b = rb->reserve(3, 0);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(static_cast<uint8_t*>(b) - static_cast<uint8_t*>(a), 16);  // 8 header + 8 (5 padded)
  memcpy(a, "hello", 5);
  memcpy(b, "bye", 3);
  rb->submit(b, 0);
  std::vector<std::string> got;
  auto sink = [&](const uint8_t* d, uint32_t n) {
    got.emplace_back(reinterpret_cast<const char*>(d), n);
  };
  EXPECT_EQ(rb->drain(sink), 0u);  // a is still reserved: the consumer waits
  rb->discard(a, 0);
  EXPECT_EQ(rb->drain(sink), 1u);
  EXPECT_EQ(got, std::vector<std::string>{"bye"});
  EXPECT_EQ(rb->output("xyz", 3, 4), -EINVAL);
  // Fill: 4096-byte ring holds records while producer - consumer <= 4095.
  got.clear();
  int ok = 0;
  while (rb->output("0123456789abcdef0123456789abcdef0123456789abcdef0123456", 55, 0) == 0) ++ok;
  EXPECT_EQ(ok, (4096 - 1) / 64);       // 55 + 8 -> 64-byte records while used + 64 <= 4095
  EXPECT_EQ(rb->output("x", 1, 0), 0);  // 4032 + 16 <= 4095 still fits
  EXPECT_EQ(rb->output(std::string(48, 'a').data(), 48, 0), -EAGAIN);  // 4048 + 56 > 4095
  EXPECT_EQ(rb->query(BPF_RB_AVAIL_DATA), 4048u);
  EXPECT_EQ(rb->drain(sink), size_t(ok) + 1);
  // The ring wraps: records keep coming out whole and in order.
  for (int i = 0; i < 200; ++i) {
    std::string s = "rec" + std::to_string(i) + std::string(size_t(i % 90), '.');
    ASSERT_EQ(rb->output(s.data(), s.size(), 0), 0) << i;
    got.clear();
    ASSERT_EQ(rb->drain(sink), 1u);
    EXPECT_EQ(got[0], s);
  }
  EXPECT_EQ(rb->query(BPF_RB_AVAIL_DATA), 0u);
  EXPECT_EQ(rb->query(BPF_RB_RING_SIZE), 4096u);
  EXPECT_THROW(create_map("r", MapDef{BPF_MAP_TYPE_RINGBUF, 0, 0, 5000}, 1), knod::Error);
}

TEST(MapOfMaps, ArrayAndHashOfMaps) {
  MapDef inner{BPF_MAP_TYPE_ARRAY, 4, 8, 2};
  std::vector<MapPtr> all = {create_map("i0", inner, 1), create_map("i1", inner, 1),
                             create_map("wrong", MapDef{BPF_MAP_TYPE_ARRAY, 4, 4, 2}, 1)};
  auto resolve = [&](uint32_t id) { return id < all.size() ? all[id] : nullptr; };
  MapPtr a = create_map("a", MapDef{BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 3, 0, 0}, 1);
  auto* am = static_cast<MapOfMaps*>(a.get());
  uint32_t k = 1, id = 1, bad = 2, missing = 9, out;
  EXPECT_EQ(a->user_update(&k, &id, BPF_ANY), -EINVAL);  // no inner template yet
  am->set_inner(inner, resolve);
  EXPECT_EQ(a->user_update(&k, &id, BPF_NOEXIST), -EINVAL);
  EXPECT_EQ(a->user_update(&k, &bad, BPF_ANY), -EINVAL);  // value_size differs
  EXPECT_EQ(a->user_update(&k, &missing, BPF_ANY), -EBADF);
  EXPECT_EQ(a->user_update(&k, &id, BPF_ANY), 0);
  EXPECT_EQ(a->lookup(&k, 0), all[1].get());
  EXPECT_EQ(a->user_lookup(&k, &out), 0);
  EXPECT_EQ(out, 1u);
  EXPECT_EQ(a->remove(&k), 0);
  EXPECT_EQ(a->remove(&k), -ENOENT);
  EXPECT_EQ(a->lookup(&k, 0), nullptr);

  MapPtr h = create_map("h", MapDef{BPF_MAP_TYPE_HASH_OF_MAPS, 8, 4, 2, 0, 0}, 1);
  static_cast<MapOfMaps*>(h.get())->set_inner(inner, resolve);
  uint64_t hk = 0xdead, hk2 = 2, hk3 = 3;
  uint32_t id0 = 0;
  EXPECT_EQ(h->user_update(&hk, &id0, BPF_EXIST), -ENOENT);
  EXPECT_EQ(h->user_update(&hk, &id0, BPF_ANY), 0);
  EXPECT_EQ(h->user_update(&hk2, &id, BPF_ANY), 0);
  EXPECT_EQ(h->user_update(&hk3, &id, BPF_ANY), -E2BIG);
  EXPECT_EQ(static_cast<MapOfMaps*>(h.get())->inner(&hk), all[0].get());
  EXPECT_EQ(h->remove(&hk3), -ENOENT);
}
