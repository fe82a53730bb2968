// QUEUE / STACK (kernel/bpf/queue_stack_maps.c).
#include <gtest/gtest.h>

#include "base/error.h"
#include "maps/queue_stack.h"

using namespace knod::maps;

TEST(QueueMap, FifoOverwriteAndErrnos) {
  MapPtr m = create_map("q", MapDef{BPF_MAP_TYPE_QUEUE, 0, 4, 3}, 1);
  uint32_t v, out;
  EXPECT_EQ(m->pop(&out), -ENOENT);
  EXPECT_EQ(m->peek(&out), -ENOENT);
  for (v = 1; v <= 3; ++v) ASSERT_EQ(m->push(&v, BPF_ANY), 0);
  v = 4;
  EXPECT_EQ(m->push(&v, BPF_ANY), -E2BIG);
  EXPECT_EQ(m->push(&v, BPF_NOEXIST), -EINVAL);
  EXPECT_EQ(m->push(&v, BPF_EXIST), 0);  // overwrites the oldest (1)
  EXPECT_EQ(m->peek(&out), 0);
  EXPECT_EQ(out, 2u);
  std::vector<uint32_t> got;
  while (m->pop(&out) == 0) got.push_back(out);
  EXPECT_EQ(got, (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(m->get_next_key(nullptr, &out), -EINVAL);
  EXPECT_EQ(m->user_delete(nullptr), -EINVAL);
  EXPECT_EQ(m->lookup(nullptr, 0), nullptr);
  // user side: update = push, lookup = peek
  v = 9;
  EXPECT_EQ(m->user_update(nullptr, &v, BPF_ANY), 0);
  EXPECT_EQ(m->user_lookup(nullptr, &out), 0);
  EXPECT_EQ(out, 9u);
}

TEST(StackMap, Lifo) {
  MapPtr m = create_map("s", MapDef{BPF_MAP_TYPE_STACK, 0, 4, 2}, 1);
  uint32_t v, out;
  for (v = 1; v <= 2; ++v) ASSERT_EQ(m->push(&v, BPF_ANY), 0);
  v = 3;
  EXPECT_EQ(m->push(&v, BPF_EXIST), 0);  // drops the oldest (1)
  EXPECT_EQ(m->peek(&out), 0);
  EXPECT_EQ(out, 3u);
  std::vector<uint32_t> got;
  while (static_cast<QueueStackMap*>(m.get())->user_pop(&out) == 0) got.push_back(out);
  EXPECT_EQ(got, (std::vector<uint32_t>{3, 2}));
}

TEST(QueueMap, KeySizeMustBeZero) {
  EXPECT_THROW(create_map("q", MapDef{BPF_MAP_TYPE_QUEUE, 4, 4, 3}, 1), knod::Error);
  EXPECT_THROW(create_map("q", MapDef{BPF_MAP_TYPE_STACK, 0, 0, 3}, 1), knod::Error);
}
