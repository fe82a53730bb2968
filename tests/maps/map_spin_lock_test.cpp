// Values holding a struct bpf_spin_lock (MapDef::spin_lock_off): the copies leave the lock
// word alone (copy_map_value), BPF_F_LOCK updates copy under it (copy_map_value_locked), and
// only HASH and ARRAY maps may have one (map_check_btf: -EOPNOTSUPP otherwise).
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "maps/map.h"
#include "maps/spin_lock.h"

using namespace knod::maps;

namespace {

struct Val {
  uint32_t lock, cnt;
  uint64_t x;
};

MapDef with_lock(uint32_t type) {
  MapDef d{type, 4, sizeof(Val), 4};
  d.spin_lock_off = 0;
  return d;
}

TEST(SpinLockValue, UpdatesNeverCopyTheLockWord) {
  for (uint32_t type : {BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_ARRAY}) {
    SCOPED_TRACE(type);
    MapPtr m = create_map("m", with_lock(type), 1);
    const uint32_t k = 0;
    Val in{1, 7, 9};  // the caller's lock word held
    ASSERT_EQ(m->update(&k, &in, BPF_ANY, 0), 0);
    auto* v = static_cast<Val*>(m->lookup(&k, 0));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->lock, 0u);
    EXPECT_EQ(v->cnt, 7u);
    EXPECT_TRUE(value_lock(&v->lock));  // free: taken at once
    value_unlock(&v->lock);
    in.cnt = 8;
    ASSERT_EQ(m->user_update(&k, &in, BPF_ANY), 0);
    v = static_cast<Val*>(m->lookup(&k, 0));  // HASH: the new value is a new element
    EXPECT_EQ(v->lock, 0u);
    EXPECT_EQ(v->cnt, 8u);
    in.cnt = 10;
    EXPECT_EQ(m->update(&k, &in, BPF_F_LOCK, 0), 0);
    EXPECT_EQ(v->cnt, 10u);  // in place, both types
    EXPECT_EQ(v->lock, 0u);  // released after the locked copy
    EXPECT_EQ(m->update(&k, &in, BPF_F_LOCK | BPF_NOEXIST, 0), -EEXIST);
  }
}

// The lock as the value's last 4 bytes: the copy stops before it.
TEST(SpinLockValue, LockAtTheEndOfTheValue) {
  struct Tail {
    uint64_t x;
    uint32_t cnt, lock;
  };
  MapDef d{BPF_MAP_TYPE_ARRAY, 4, sizeof(Tail), 1};
  d.spin_lock_off = 12;
  MapPtr a = create_map("a", d, 1);
  const uint32_t k = 0;
  Tail in{0x1122334455667788, 7, 1};
  ASSERT_EQ(a->update(&k, &in, BPF_ANY, 0), 0);
  auto* v = static_cast<Tail*>(a->lookup(&k, 0));
  EXPECT_EQ(v->x, 0x1122334455667788u);
  EXPECT_EQ(v->cnt, 7u);
  EXPECT_EQ(v->lock, 0u);
}

TEST(SpinLockValue, FLockNeedsALock) {
  MapPtr h = create_map("h", MapDef{BPF_MAP_TYPE_HASH, 4, 16, 4}, 1);
  MapPtr a = create_map("a", MapDef{BPF_MAP_TYPE_ARRAY, 4, 16, 4}, 1);
  const uint32_t k = 0;
  Val in{0, 1, 2};
  EXPECT_EQ(h->update(&k, &in, BPF_F_LOCK, 0), -EINVAL);
  EXPECT_EQ(a->update(&k, &in, BPF_F_LOCK, 0), -EINVAL);
  EXPECT_EQ(a->update(&k, &in, BPF_F_LOCK | BPF_NOEXIST, 0), -EEXIST);  // checked first
  // The syscall checks the lock first (KernelDiff.Array's flags 5 against the kernel).
  EXPECT_EQ(a->user_update(&k, &in, BPF_F_LOCK | BPF_NOEXIST), -EINVAL);
  EXPECT_EQ(h->user_update(&k, &in, BPF_F_LOCK | BPF_NOEXIST), -EINVAL);
}

// A lock word left held (a program may store to it directly; the kernel's verifier forbids
// that) makes the lock give up instead of spinning forever.
TEST(SpinLockValue, AHeldWordFailsInsteadOfHanging) {
  MapPtr a = create_map("a", with_lock(BPF_MAP_TYPE_ARRAY), 1);
  const uint32_t k = 0;
  auto* v = static_cast<Val*>(a->lookup(&k, 0));
  v->lock = 1;
  Val in{0, 1, 2};
  EXPECT_EQ(a->update(&k, &in, BPF_F_LOCK, 0), -EBUSY);
  EXPECT_FALSE(value_lock(&v->lock));
}

TEST(SpinLockValue, OnlyHashAndArray) {
  for (uint32_t type :
       {BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_PERCPU_HASH, BPF_MAP_TYPE_PERCPU_ARRAY}) {
    SCOPED_TRACE(type);
    try {
      create_map("m", with_lock(type), 1);
      ADD_FAILURE() << "created";
    } catch (const knod::Error& e) {
      EXPECT_NE(std::strstr(e.what(), "bpf_spin_lock"), nullptr) << e.what();
      EXPECT_NE(std::strstr(e.what(), "EOPNOTSUPP"), nullptr) << e.what();
    }
  }
}

}  // namespace
