#include "maps/perf_event_array.h"

#include "maps/prog_array.h"

namespace knod::maps {

namespace {
const MapDef& checked(const std::string& name, const MapDef& def) {
  check_fd_array(name, def);
  return def;
}
// Record layout in a slot buffer: u32 size, then the bytes, padded to 8.
constexpr uint32_t kHdr = 4;
}  // namespace

PerfEventArray::PerfEventArray(std::string name, MapDef def, uint32_t slot_bytes)
    : Map(name, checked(name, def)),
      slot_bytes_(slot_bytes),
      buf_(size_t(def.max_entries) * slot_bytes, 0),
      slots_(new Slot[def.max_entries]),
      fds_(def.max_entries, 4) {}

long PerfEventArray::output(uint64_t flags, uint32_t cpu, const void* data, uint64_t size,
                            const void* extra, uint64_t extra_size) {
  if (flags & ~(BPF_F_INDEX_MASK | BPF_F_CTXLEN_MASK)) return -EINVAL;
  uint64_t index = flags & BPF_F_INDEX_MASK;
  if (index == BPF_F_CURRENT_CPU) index = cpu;
  if (index >= def().max_entries) return -E2BIG;
  uint64_t total = size + extra_size;
  uint64_t need = (kHdr + total + 7) & ~uint64_t(7);
  Slot& s = slots_[index];
  std::lock_guard<SpinLock> g(s.lock);
  if (total > UINT32_MAX || need > slot_bytes_ - s.used) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    return -ENOSPC;
  }
  uint8_t* p = buf_.data() + size_t(index) * slot_bytes_ + s.used;
  uint32_t sz = uint32_t(total);
  std::memcpy(p, &sz, kHdr);
  if (size) std::memcpy(p + kHdr, data, size);
  if (extra_size) std::memcpy(p + kHdr + size, extra, extra_size);
  s.used += uint32_t(need);
  return 0;
}

size_t PerfEventArray::drain(
    const std::function<void(uint32_t slot, const uint8_t* data, uint32_t size)>& fn) {
  size_t n = 0;
  for (uint32_t i = 0; i < def().max_entries; ++i) {
    Slot& s = slots_[i];
    std::lock_guard<SpinLock> g(s.lock);
    const uint8_t* base = buf_.data() + size_t(i) * slot_bytes_;
    for (uint32_t off = 0; off < s.used;) {
      uint32_t sz;
      std::memcpy(&sz, base + off, kHdr);
      fn(i, base + off + kHdr, sz);
      ++n;
      off += (kHdr + sz + 7) & ~7u;
    }
    s.used = 0;
  }
  return n;
}

long PerfEventArray::remove(const void* key) {
  uint32_t i = key_u32(key);
  if (i >= def().max_entries) return -E2BIG;
  return fds_.clear(i) ? 0 : -ENOENT;
}

long PerfEventArray::user_update(const void* key, const void* value, uint64_t flags) {
  if (flags != BPF_ANY) return -EINVAL;
  uint32_t i = key_u32(key);
  if (i >= def().max_entries) return -E2BIG;
  fds_.set(i, value);
  return 0;
}

}  // namespace knod::maps
