// Differential test against the kernel (the oracle): the same map is created with
// bpf(BPF_MAP_CREATE) through libbpf and with knod; the same random sequence of updates,
// deletes, lookups and get_next_key runs on both; every return code and every value must
// match, and a final full walk from get_next_key(NULL) must give the same keys in the same
// order (hash maps use BPF_F_ZERO_SEED so the kernel's jhash bucket order is fixed).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "maps/queue_stack.h"

using namespace knod::maps;

namespace {

struct Pair {
  int fd = -1;
  MapPtr mine;
  MapDef def;
  uint32_t uvs = 0;  // user value size
  ~Pair() {
    if (fd >= 0) close(fd);
  }
};

uint32_t ncpus() {
  return uint32_t(libbpf_num_possible_cpus());
}

/// Creates both maps, or returns false after GTEST_SKIP when bpf() is refused.
bool make(Pair& p, MapDef def) {
  LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = def.map_flags);
  p.fd = bpf_map_create(bpf_map_type(def.type), "knod_diff", def.key_size, def.value_size,
                        def.max_entries, &o);
  if (p.fd < 0) return false;
  p.def = def;
  p.mine = create_map("knod_diff", def, ncpus());
  p.uvs = p.mine->user_value_size();
  return true;
}

#define MAKE_OR_SKIP(p, ...)                                                              \
  do {                                                                                    \
    if (!make(p, MapDef{__VA_ARGS__}))                                                    \
      GTEST_SKIP() << "bpf(BPF_MAP_CREATE) refused (" << strerror(errno)                  \
                   << "): run as root on a kernel with bpf() to compare with the kernel"; \
  } while (0)

class Script {
 public:
  Script(Pair& p, uint32_t seed) : p_(p), rng_(seed) {}

  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = uint8_t(rng_());
    return b;
  }
  uint32_t pick(uint32_t n) { return uint32_t(rng_() % n); }

  void update(const std::vector<uint8_t>& k, const std::vector<uint8_t>& v, uint64_t flags) {
    int rk = bpf_map_update_elem(p_.fd, k.empty() ? nullptr : k.data(), v.data(), flags);
    long rm = p_.mine->user_update(k.empty() ? nullptr : k.data(), v.data(), flags);
    EXPECT_EQ(rm, rk) << "update flags " << flags << " step " << step_;
    ++step_;
  }
  void remove(const std::vector<uint8_t>& k) {
    int rk = bpf_map_delete_elem(p_.fd, k.data());
    long rm = p_.mine->user_delete(k.data());
    EXPECT_EQ(rm, rk) << "delete step " << step_;
    ++step_;
  }
  void lookup(const std::vector<uint8_t>& k) {
    std::vector<uint8_t> a(p_.uvs, 0xaa), b(p_.uvs, 0xaa);
    int rk = bpf_map_lookup_elem(p_.fd, k.empty() ? nullptr : k.data(), a.data());
    long rm = p_.mine->user_lookup(k.empty() ? nullptr : k.data(), b.data());
    EXPECT_EQ(rm, rk) << "lookup step " << step_;
    if (rk == 0 && rm == 0) {
      EXPECT_EQ(b, a) << "value at step " << step_;
    }
    ++step_;
  }
  void pop() {
    std::vector<uint8_t> a(p_.uvs), b(p_.uvs);
    int rk = bpf_map_lookup_and_delete_elem(p_.fd, nullptr, a.data());
    long rm = static_cast<QueueStackMap*>(p_.mine.get())->user_pop(b.data());
    EXPECT_EQ(rm, rk) << "pop step " << step_;
    if (rk == 0) {
      EXPECT_EQ(b, a);
    }
    ++step_;
  }
  void next_key(const std::vector<uint8_t>* k) {
    std::vector<uint8_t> a(p_.def.key_size, 0), b(p_.def.key_size, 0);
    int rk = bpf_map_get_next_key(p_.fd, k ? k->data() : nullptr, a.data());
    long rm = p_.mine->get_next_key(k ? k->data() : nullptr, b.data());
    EXPECT_EQ(rm, rk) << "get_next_key step " << step_;
    if (rk == 0) {
      EXPECT_EQ(b, a) << "next key at step " << step_;
    }
    ++step_;
  }
  /// Walks both maps from the first key; same keys, same order, same values.
  void walk() {
    std::vector<uint8_t> cur(p_.def.key_size), nk(p_.def.key_size), nm(p_.def.key_size);
    bool first = true;
    size_t n = 0;
    for (;; ++n) {
      int rk = bpf_map_get_next_key(p_.fd, first ? nullptr : cur.data(), nk.data());
      long rm = p_.mine->get_next_key(first ? nullptr : cur.data(), nm.data());
      ASSERT_EQ(rm, rk) << "walk position " << n;
      if (rk) break;
      ASSERT_EQ(nm, nk) << "walk position " << n;
      lookup(nk);
      cur = nk;
      first = false;
      ASSERT_LT(n, 100000u);
    }
  }

 private:
  Pair& p_;
  std::mt19937 rng_;
  size_t step_ = 0;
};

const uint64_t kFlags[] = {BPF_ANY, BPF_NOEXIST, BPF_EXIST, 5 /* bad */};

/// Keys drawn from a small domain so that updates, replaces and deletes collide often.
void random_ops(Script& s, uint32_t nkeys, int steps,
                const std::function<std::vector<uint8_t>(uint32_t)>& key,
                const std::function<std::vector<uint8_t>()>& value) {
  for (int i = 0; i < steps; ++i) {
    auto k = key(s.pick(nkeys));
    switch (s.pick(6)) {
      case 0:
      case 1:
        s.update(k, value(), kFlags[s.pick(4)]);
        break;
      case 2:
        s.remove(k);
        break;
      case 3:
        s.lookup(k);
        break;
      case 4:
        s.next_key(&k);
        break;
      default:
        s.next_key(nullptr);
        break;
    }
  }
  s.walk();
}

std::vector<uint8_t> u32(uint32_t v) {
  std::vector<uint8_t> b(4);
  memcpy(b.data(), &v, 4);
  return b;
}

}  // namespace

TEST(KernelDiff, Array) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_ARRAY, 4, 12, 16);
  Script s(p, 1);
  random_ops(s, 20, 400, u32, [&] { return s.bytes(12); });
}

TEST(KernelDiff, PercpuArray) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_PERCPU_ARRAY, 4, 12, 8);
  Script s(p, 2);
  random_ops(s, 10, 300, u32, [&] { return s.bytes(p.uvs); });
}

TEST(KernelDiff, HashZeroSeedSameOrder) {
  for (uint32_t ks : {4u, 6u, 16u}) {
    Pair p;
    MAKE_OR_SKIP(p, BPF_MAP_TYPE_HASH, ks, 8, 24, BPF_F_ZERO_SEED);
    Script s(p, 3 + ks);
    auto key = [&](uint32_t i) {
      std::vector<uint8_t> k(ks, 0);
      for (uint32_t j = 0; j < ks; ++j) k[j] = uint8_t(i * 37 + j);
      return k;
    };
    random_ops(s, 40, 1500, key, [&] { return s.bytes(8); });
  }
}

TEST(KernelDiff, HashNoPreallocFlag) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_HASH, 4, 4, 10, BPF_F_ZERO_SEED | BPF_F_NO_PREALLOC);
  Script s(p, 9);
  random_ops(s, 16, 600, u32, [&] { return s.bytes(4); });
}

TEST(KernelDiff, PercpuHash) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 12, BPF_F_ZERO_SEED);
  Script s(p, 4);
  random_ops(s, 20, 800, u32, [&] { return s.bytes(p.uvs); });
}

TEST(KernelDiff, LpmTrie) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_LPM_TRIE, 8, 4, 12, BPF_F_NO_PREALLOC);
  Script s(p, 5);
  // Prefixes over a few base addresses; data bits past prefixlen are zero (as routes are).
  auto key = [&](uint32_t i) {
    uint32_t plen = (i * 7) % 34;  // 0..33 (33 is invalid)
    uint32_t addr = (i % 3 == 0) ? 0xc0a80000u : (i % 3 == 1 ? 0xc0a88000u : 0x0a000000u);
    addr |= (i * 0x01010101u) & 0x0000ffffu;
    uint32_t mask = plen >= 32 ? 0xffffffffu : (plen == 0 ? 0 : ~0u << (32 - plen));
    uint32_t a = __builtin_bswap32(addr & mask);
    std::vector<uint8_t> k(8);
    memcpy(k.data(), &plen, 4);
    memcpy(k.data() + 4, &a, 4);
    return k;
  };
  random_ops(s, 60, 1500, key, [&] { return s.bytes(4); });
}

TEST(KernelDiff, QueueAndStack) {
  for (uint32_t type : {uint32_t(BPF_MAP_TYPE_QUEUE), uint32_t(BPF_MAP_TYPE_STACK)}) {
    Pair p;
    MAKE_OR_SKIP(p, type, 0, 4, 5);
    Script s(p, 6);
    for (int i = 0; i < 400; ++i) {
      switch (s.pick(4)) {
        case 0:
        case 1:
          s.update({}, s.bytes(4), kFlags[s.pick(4)]);
          break;
        case 2:
          s.pop();
          break;
        default:
          s.lookup({});
          break;
      }
    }
  }
}

TEST(KernelDiff, DevmapAndDevmapHash) {
  // ifindex 1 is the loopback device, present everywhere; 0 clears (DEVMAP) / is -EINVAL.
  for (uint32_t type : {uint32_t(BPF_MAP_TYPE_DEVMAP), uint32_t(BPF_MAP_TYPE_DEVMAP_HASH)}) {
    Pair p;
    MAKE_OR_SKIP(p, type, 4, 8, 6);
    Script s(p, 7);
    auto value = [&] {
      std::vector<uint8_t> v(8, 0);
      uint32_t ifx = s.pick(4) ? 1 : 0;
      memcpy(v.data(), &ifx, 4);
      return v;
    };
    random_ops(s, type == BPF_MAP_TYPE_DEVMAP ? 8 : 12, 500, u32, value);
  }
}

TEST(KernelDiff, Cpumap) {
  Pair p;
  MAKE_OR_SKIP(p, BPF_MAP_TYPE_CPUMAP, 4, 4, ncpus() + 2);
  Script s(p, 8);
  auto value = [&] {
    uint32_t q[] = {0, 1, 192, 20000};
    return u32(q[s.pick(4)]);
  };
  random_ops(s, ncpus() + 4, 120, u32, value);
}
