#include "maps/ringbuf.h"

#include <bit>
#include <cstring>
#include <mutex>

namespace knod::maps {

namespace {
constexpr uint32_t kHdr = BPF_RINGBUF_HDR_SZ;
const MapDef& checked(const std::string& name, const MapDef& def) {
  check_flags(name, def, BPF_F_NUMA_NODE);
  if (def.key_size || def.value_size) bad_def(name, def, "key_size and value_size must be 0");
  if (def.max_entries == 0 || !std::has_single_bit(def.max_entries) || def.max_entries % 4096)
    bad_def(name, def,
            "max_entries " + std::to_string(def.max_entries) +
                " must be a power of 2 and a multiple of 4096 bytes");
  return def;
}
uint32_t load_len(uint8_t* hdr) {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(hdr))
      .load(std::memory_order_acquire);
}
void store_len(uint8_t* hdr, uint32_t v) {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(hdr)).store(v, std::memory_order_release);
}
uint64_t rec_len(uint32_t len) {
  return (uint64_t(len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)) + kHdr + 7) & ~7ull;
}
}  // namespace

RingBuf::RingBuf(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      mask_(def.max_entries - 1),
      data_(2 * size_t(def.max_entries), 0) {}

void* RingBuf::reserve(uint64_t size, uint64_t flags) {
  if (flags) return nullptr;
  if (size > (mask_ + 1) - kHdr || size > 0x0fffffff) return nullptr;
  uint64_t len = (size + kHdr + 7) & ~7ull;
  uint64_t cons = consumer_pos_.load(std::memory_order_acquire);
  std::lock_guard<SpinLock> g(lock_);
  uint64_t prod = producer_pos_.load(std::memory_order_relaxed);
  while (pending_pos_ < prod) {  // skip records already submitted or discarded
    uint32_t l = load_len(data_.data() + (pending_pos_ & mask_));
    if (l & BPF_RINGBUF_BUSY_BIT) break;
    pending_pos_ += rec_len(l);
  }
  uint64_t next = prod + len;
  if (next - cons > mask_ || next - pending_pos_ > mask_) return nullptr;
  uint8_t* hdr = data_.data() + (prod & mask_);
  uint32_t pg_off = uint32_t((prod & mask_) / 4096);
  std::memcpy(hdr + 4, &pg_off, 4);
  store_len(hdr, uint32_t(size) | BPF_RINGBUF_BUSY_BIT);
  producer_pos_.store(next, std::memory_order_release);
  return hdr + kHdr;
}

void RingBuf::commit(void* sample, bool discard) {
  auto* hdr = static_cast<uint8_t*>(sample) - kHdr;
  if (hdr < data_.data() || hdr + kHdr > data_.data() + data_.size()) return;
  uint32_t l = load_len(hdr) & ~BPF_RINGBUF_BUSY_BIT;
  if (discard) l |= BPF_RINGBUF_DISCARD_BIT;
  store_len(hdr, l);
}

void RingBuf::submit(void* sample, uint64_t) {
  commit(sample, false);
}
void RingBuf::discard(void* sample, uint64_t) {
  commit(sample, true);
}

long RingBuf::output(const void* data, uint64_t size, uint64_t flags) {
  if (flags & ~uint64_t(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP)) return -EINVAL;
  void* p = reserve(size, 0);
  if (!p) return -EAGAIN;
  std::memcpy(p, data, size);
  commit(p, false);
  return 0;
}

uint64_t RingBuf::query(uint64_t flags) const {
  // The consumer first, as the kernel's ringbuf_avail_data_sz: a drain in between can only
  // make `prod - cons` smaller, never wrap it.
  const uint64_t cons = consumer_pos_.load(), prod = producer_pos_.load();
  switch (flags) {
    case BPF_RB_AVAIL_DATA:
      return prod - cons;
    case BPF_RB_RING_SIZE:
      return mask_ + 1;
    case BPF_RB_CONS_POS:
      return cons;
    case BPF_RB_PROD_POS:
      return prod;
    default:
      return 0;
  }
}

size_t RingBuf::drain(const std::function<void(const uint8_t* data, uint32_t size)>& fn) {
  size_t n = 0;
  uint64_t cons = consumer_pos_.load(std::memory_order_relaxed);
  uint64_t prod = producer_pos_.load(std::memory_order_acquire);
  while (cons < prod) {
    uint8_t* hdr = data_.data() + (cons & mask_);
    uint32_t l = load_len(hdr);
    if (l & BPF_RINGBUF_BUSY_BIT) break;
    if (!(l & BPF_RINGBUF_DISCARD_BIT)) {
      fn(hdr + kHdr, l & ~BPF_RINGBUF_DISCARD_BIT);
      ++n;
    }
    cons += rec_len(l);
    consumer_pos_.store(cons, std::memory_order_release);
  }
  return n;
}

}  // namespace knod::maps
