// Device map images (device/cuda/map_image.h): what the GPU sees of a host map, and how the
// device's changes come back. Host-only: the "device" edits are made on the image here
// exactly as device/gpu/runtime.c makes them (FNV-1a, linear probing, slot states).
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstring>

#include "device/cuda/map_image.h"
#include "maps/map.h"

namespace knod::gpu_test {
namespace {

using device::cuda::build_map_image;
using device::cuda::gpu_key_hash;
using device::cuda::map_header;
using device::cuda::write_back_map_image;

TEST(MapImage, ArrayValuesRoundTrip) {
  auto m = maps::create_map("counters", {BPF_MAP_TYPE_ARRAY, 4, 12, 3}, 1);
  uint32_t k = 2;
  uint8_t v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  ASSERT_EQ(m->user_update(&k, v, BPF_ANY), 0);
  auto img = build_map_image(*m);
  const knod_gpu_map& h = map_header(img);
  EXPECT_EQ(h.type, uint32_t(BPF_MAP_TYPE_ARRAY));
  EXPECT_EQ(h.value_stride, 16u);  // round_up(12, 8), as kernel/bpf/arraymap.c elem_size
  EXPECT_EQ(h.values_bytes, 3u * 16u);
  EXPECT_EQ(std::memcmp(img.data() + h.values_off + 2 * 16, v, 12), 0);
  img[h.values_off + 0] = 0x7f;  // the device writes element 0
  write_back_map_image(*m, img);
  uint32_t k0 = 0;
  uint8_t out[12];
  ASSERT_EQ(m->user_lookup(&k0, out), 0);
  EXPECT_EQ(out[0], 0x7f);
}

TEST(MapImage, PercpuArrayKeepsEveryCpu) {
  auto m = maps::create_map("pc", {BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2}, 4);
  uint32_t k = 1;
  uint64_t v = 0xabcdef;
  ASSERT_EQ(m->update(&k, &v, BPF_ANY, 3), 0);  // CPU 3's element 1
  auto img = build_map_image(*m);
  const knod_gpu_map& h = map_header(img);
  EXPECT_EQ(h.ncpus, 4u);
  // 2 values + a 64-byte gap (8 slots of 8 bytes) per CPU: the host pool's layout.
  EXPECT_EQ(h.cpu_slots, 10u);
  EXPECT_EQ(h.values_bytes, 4u * 10u * 8u);
  uint64_t got = 0;
  std::memcpy(&got, img.data() + h.values_off + (3 * 10 + 1) * 8, 8);
  EXPECT_EQ(got, v);
}

TEST(MapImage, HashEntriesFollowTheDeviceProbing) {
  auto m = maps::create_map("flows", {BPF_MAP_TYPE_HASH, 4, 8, 4}, 1);
  for (uint32_t k : {10u, 20u, 30u}) {
    uint64_t v = k * 100;
    ASSERT_EQ(m->user_update(&k, &v, BPF_ANY), 0);
  }
  auto img = build_map_image(*m);
  const knod_gpu_map& h = map_header(img);
  EXPECT_EQ(h.nslots, 8u);  // power of two >= 2 * max_entries
  EXPECT_EQ(h.count, 3u);
  auto* state = reinterpret_cast<uint32_t*>(img.data() + h.state_off);
  auto find = [&](uint32_t key) -> int {
    uint32_t s = gpu_key_hash(reinterpret_cast<uint8_t*>(&key), 4) & (h.nslots - 1);
    for (uint32_t p = 0; p < h.nslots; ++p, s = (s + 1) & (h.nslots - 1)) {
      if (state[s] == KNOD_SLOT_EMPTY) return -1;
      if (state[s] == KNOD_SLOT_FULL &&
          std::memcmp(img.data() + h.keys_off + s * h.key_stride, &key, 4) == 0)
        return int(s);
    }
    return -1;
  };
  int s20 = find(20), s30 = find(30);
  ASSERT_GE(s20, 0);
  ASSERT_GE(s30, 0);
  EXPECT_EQ(find(40), -1);
  uint64_t v20;
  std::memcpy(&v20, img.data() + h.values_off + s20 * h.value_stride, 8);
  EXPECT_EQ(v20, 2000u);
  // Device: delete 30, change 20.
  state[s30] = KNOD_SLOT_DELETED;
  uint64_t nv = 7;
  std::memcpy(img.data() + h.values_off + s20 * h.value_stride, &nv, 8);
  write_back_map_image(*m, img);
  uint32_t k = 30;
  uint64_t out = 0;
  EXPECT_EQ(m->user_lookup(&k, &out), -2);  // -ENOENT
  k = 20;
  ASSERT_EQ(m->user_lookup(&k, &out), 0);
  EXPECT_EQ(out, 7u);
  k = 10;
  ASSERT_EQ(m->user_lookup(&k, &out), 0);
  EXPECT_EQ(out, 1000u);
}

TEST(MapImage, DevmapSlotsCarryPresence) {
  auto m = maps::create_map("tx_ports", {BPF_MAP_TYPE_DEVMAP, 4, 4, 4}, 1);
  uint32_t k = 1, ifindex = 7;
  ASSERT_EQ(m->user_update(&k, &ifindex, BPF_ANY), 0);
  auto img = build_map_image(*m);
  const knod_gpu_map& h = map_header(img);
  EXPECT_EQ(h.value_stride, 16u);  // round_up(4, 8) + the presence word
  auto word = [&](uint32_t slot, uint32_t at) {
    uint32_t v;
    std::memcpy(&v, img.data() + h.values_off + slot * h.value_stride + at, 4);
    return v;
  };
  EXPECT_EQ(word(1, 0), 7u);
  EXPECT_EQ(word(1, 8), 1u);
  EXPECT_EQ(word(0, 8), 0u);
  EXPECT_EQ(word(3, 8), 0u);
}

TEST(MapImage, UnsupportedTypeIsAnError) {
  auto m = maps::create_map("q", {BPF_MAP_TYPE_QUEUE, 0, 4, 16, 0}, 1);
  try {
    build_map_image(*m);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "map q: BPF_MAP_TYPE_QUEUE (22) not supported on cuda yet");
  }
}

// LPM_TRIE: entries in slots 0.. (scanned by the runtime), written back as the device left them.
TEST(MapImage, LpmTrieSlotsAndWriteBack) {
  auto m = maps::create_map("lpm", {BPF_MAP_TYPE_LPM_TRIE, 8, 4, 4, BPF_F_NO_PREALLOC}, 1);
  uint8_t k24[8] = {24, 0, 0, 0, 10, 1, 2, 0}, k8[8] = {8, 0, 0, 0, 10, 0, 0, 0};
  uint32_t v1 = 1, v2 = 2;
  ASSERT_EQ(m->user_update(k24, &v1, BPF_ANY), 0);
  ASSERT_EQ(m->user_update(k8, &v2, BPF_ANY), 0);
  auto img = build_map_image(*m);
  const knod_gpu_map& h = map_header(img);
  EXPECT_EQ(h.type, uint32_t(BPF_MAP_TYPE_LPM_TRIE));
  EXPECT_EQ(h.nslots, 4u);
  EXPECT_EQ(h.count, 2u);
  auto* state = reinterpret_cast<uint32_t*>(img.data() + h.state_off);
  EXPECT_EQ(state[0], uint32_t(KNOD_SLOT_FULL));
  EXPECT_EQ(state[1], uint32_t(KNOD_SLOT_FULL));
  EXPECT_EQ(state[2], uint32_t(KNOD_SLOT_EMPTY));
  // The device deletes slot 0 and changes slot 1's value: the host map follows.
  state[0] = KNOD_SLOT_EMPTY;
  uint32_t v9 = 9;
  std::memcpy(img.data() + h.values_off + h.value_stride, &v9, 4);
  uint8_t kept[8];
  std::memcpy(kept, img.data() + h.keys_off + h.key_stride, 8);
  write_back_map_image(*m, img);
  uint32_t got = 0;
  EXPECT_EQ(m->user_lookup(kept, &got), 0);
  EXPECT_EQ(got, 9u);
  // Only that entry is left (a lookup of the deleted key would still match the other prefix).
  uint8_t first[8], next[8];
  ASSERT_EQ(m->get_next_key(nullptr, first), 0);
  EXPECT_EQ(std::memcmp(first, kept, 8), 0);
  EXPECT_NE(m->get_next_key(first, next), 0);
}

}  // namespace
}  // namespace knod::gpu_test
