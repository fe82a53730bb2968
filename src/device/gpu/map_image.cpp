// Device map images (see map_image.h); the layout and probing match device/gpu/runtime.c.
#include "device/gpu/map_image.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "base/error.h"
#include "maps/array.h"
#include "maps/util.h"

namespace knod::device::gpu {
namespace {

constexpr uint32_t kHash = 1, kArray = 2, kProgArray = 3, kPercpuArray = 6, kLruHash = 9,
                   kLpmTrie = 11, kDevmap = 14, kCpumap = 16, kXskmap = 17, kDevmapHash = 25;

uint64_t round8(uint64_t v) {
  return (v + 7) & ~uint64_t(7);
}
uint64_t header_bytes() {
  return (sizeof(knod_gpu_map) + 63) & ~uint64_t(63);
}

}  // namespace

uint32_t gpu_key_hash(const uint8_t* k, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ k[i]) * 16777619u;
  return h;
}

std::vector<uint8_t> build_map_image(maps::Map& m, std::string_view device) {
  const maps::MapDef& def = m.def();
  knod_gpu_map h{};
  h.type = def.type;
  h.key_size = def.key_size;
  h.value_size = def.value_size;
  h.max_entries = def.max_entries;
  h.map_flags = def.map_flags;
  h.value_stride = uint32_t(round8(def.value_size));
  h.key_stride = uint32_t(round8(def.key_size));
  h.ncpus = 1;
  h.values_off = header_bytes();
  std::vector<uint8_t> img;
  switch (def.type) {
    case kArray:
    case kPercpuArray: {
      auto pools = m.value_pools();
      if (pools.size() != 1) throw Error(fmt::format("map {}: no flat value pool", m.name()));
      auto* a = dynamic_cast<maps::ArrayMap*>(&m);
      h.cpu_slots = a ? a->cpu_slots() : def.max_entries;
      h.ncpus = a ? a->ncpus() : 1;
      h.values_bytes = pools[0].bytes;
      h.bytes = h.values_off + h.values_bytes;
      img.assign(h.bytes, 0);
      std::memcpy(img.data() + h.values_off, pools[0].base, pools[0].bytes);
      break;
    }
    case kHash:
    case kLruHash:
    case kDevmapHash:
    case kLpmTrie: {
      const bool lpm = def.type == kLpmTrie;  // slots scanned in order, no hashing
      uint32_t n = 1;
      if (lpm)
        n = std::max<uint32_t>(def.max_entries, 1);
      else
        while (n < 2 * def.max_entries) n <<= 1;
      h.nslots = n;
      h.state_off = header_bytes();
      h.keys_off = h.state_off + round8(4ull * n);
      h.values_off = h.keys_off + uint64_t(h.key_stride) * n;
      h.values_bytes = uint64_t(h.value_stride) * n;
      h.bytes = h.values_off + h.values_bytes;
      img.assign(h.bytes, 0);
      std::vector<uint8_t> key(def.key_size), next(def.key_size), val(m.user_value_size());
      const void* prev = nullptr;
      while (m.get_next_key(prev, next.data()) == 0) {
        key = next;
        prev = key.data();
        if (m.user_lookup(key.data(), val.data()) != 0) continue;
        uint32_t s = lpm ? h.count : gpu_key_hash(key.data(), def.key_size) & (n - 1);
        auto* state = reinterpret_cast<uint32_t*>(img.data() + h.state_off);
        if (lpm && s >= n) break;
        while (state[s] != KNOD_SLOT_EMPTY) s = (s + 1) & (n - 1);
        state[s] = KNOD_SLOT_FULL;
        std::memcpy(img.data() + h.keys_off + uint64_t(s) * h.key_stride, key.data(), def.key_size);
        std::memcpy(img.data() + h.values_off + uint64_t(s) * h.value_stride, val.data(),
                    def.value_size);
        ++h.count;
      }
      break;
    }
    case kProgArray:
    case kDevmap:
    case kCpumap:
    case kXskmap: {
      if (def.type != kProgArray) h.value_stride += 8;  // + presence word (runtime.c)
      h.values_bytes = uint64_t(def.max_entries) * h.value_stride;
      h.bytes = h.values_off + h.values_bytes;
      img.assign(h.bytes, 0);
      std::vector<uint8_t> val(std::max<uint32_t>(m.user_value_size(), 8));
      for (uint32_t k = 0; k < def.max_entries; ++k) {
        std::fill(val.begin(), val.end(), 0);
        if (m.user_lookup(&k, val.data()) != 0) continue;
        uint8_t* dst = img.data() + h.values_off + uint64_t(k) * h.value_stride;
        if (def.type == kProgArray) {
          uint32_t prog;  // program index (vm::Env::programs) + 1; 0 = empty
          std::memcpy(&prog, val.data(), 4);
          prog += 1;
          std::memcpy(dst, &prog, 4);
        } else {
          std::memcpy(dst, val.data(), def.value_size);
          uint32_t present = 1;
          std::memcpy(dst + h.value_stride - 8, &present, 4);
        }
      }
      break;
    }
    default:
      throw Error(fmt::format("map {}: {} ({}) not supported on {} yet", m.name(),
                              maps::map_type_name(def.type), def.type, device));
  }
  std::memcpy(img.data(), &h, sizeof h);
  return img;
}

uint32_t percpu_slots(const std::vector<std::vector<uint8_t>>& images) {
  uint32_t n = 0;
  for (const auto& img : images)
    if (map_header(img).type == kPercpuArray) n = std::max(n, map_header(img).ncpus);
  return n;
}

void write_back_map_image(maps::Map& m, const std::vector<uint8_t>& image) {
  const knod_gpu_map& h = map_header(image);
  if (h.type == kArray || h.type == kPercpuArray) {
    auto pools = m.value_pools();
    std::memcpy(pools[0].base, image.data() + h.values_off,
                std::min<uint64_t>(pools[0].bytes, h.values_bytes));
    return;
  }
  if (h.type != kHash && h.type != kLruHash && h.type != kLpmTrie) return;
  // Device entries (FULL slots) replace the host's: delete what the device deleted, then
  // update every live entry.
  auto* state = reinterpret_cast<const uint32_t*>(image.data() + h.state_off);
  std::set<std::string> live;
  for (uint32_t s = 0; s < h.nslots; ++s)
    if (state[s] == KNOD_SLOT_FULL)
      live.emplace(
          reinterpret_cast<const char*>(image.data() + h.keys_off + uint64_t(s) * h.key_stride),
          h.key_size);
  std::vector<std::string> gone;
  std::vector<uint8_t> key(h.key_size), next(h.key_size);
  const void* prev = nullptr;
  while (m.get_next_key(prev, next.data()) == 0) {
    key = next;
    prev = key.data();
    std::string k(reinterpret_cast<const char*>(key.data()), h.key_size);
    if (!live.count(k)) gone.push_back(k);
  }
  for (const std::string& k : gone) m.user_delete(k.data());
  for (uint32_t s = 0; s < h.nslots; ++s)
    if (state[s] == KNOD_SLOT_FULL)
      m.user_update(image.data() + h.keys_off + uint64_t(s) * h.key_stride,
                    image.data() + h.values_off + uint64_t(s) * h.value_stride, 0 /* BPF_ANY */);
}

}  // namespace knod::device::gpu
