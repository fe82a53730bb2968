// BPF_MAP_TYPE_RINGBUF (kernel/bpf/ringbuf.c): a multi-producer, single-consumer byte ring of
// max_entries bytes (a power of 2, multiple of 4096; key_size and value_size 0).
// Records are laid out as the kernel's: 8-byte header {u32 len | BUSY_BIT | DISCARD_BIT;
// u32 pg_off} then the sample, padded to 8. The kernel maps the data pages twice so a record
// is contiguous across the wrap; knod allocates 2 * max_entries bytes instead (a record that
// crosses the end continues in the second half, where the consumer reads it), so capacity and
// failures are the kernel's: reserve fails when the producer would run max_entries - 1 bytes
// ahead of the consumer or of the oldest unsubmitted record.
#pragma once

#include <atomic>
#include <functional>

#include "maps/util.h"

namespace knod::maps {

class RingBuf : public Map {
 public:
  RingBuf(std::string name, MapDef def);

  /// bpf_ringbuf_reserve: pointer to `size` writable bytes inside value_pools(), or nullptr
  /// when flags != 0, the record does not fit, or the ring is full. Never allocates/throws.
  void* reserve(uint64_t size, uint64_t flags);
  /// bpf_ringbuf_submit / bpf_ringbuf_discard: `sample` is what reserve() returned.
  void submit(void* sample, uint64_t flags);
  void discard(void* sample, uint64_t flags);
  /// bpf_ringbuf_output: 0, -EINVAL (flags other than BPF_RB_NO_WAKEUP|BPF_RB_FORCE_WAKEUP),
  /// -EAGAIN (no room).
  long output(const void* data, uint64_t size, uint64_t flags);
  /// bpf_ringbuf_query: BPF_RB_AVAIL_DATA, BPF_RB_RING_SIZE, BPF_RB_CONS_POS, BPF_RB_PROD_POS.
  uint64_t query(uint64_t flags) const;

  /// Consumer (ring_buffer__consume): calls fn for every submitted record in order, skips
  /// discarded ones, stops at the first record still reserved. Returns records handed out.
  size_t drain(const std::function<void(const uint8_t* data, uint32_t size)>& fn);

  void* lookup(const void*, uint32_t) override { return nullptr; }
  long update(const void*, const void*, uint64_t, uint32_t) override { return -EINVAL; }
  long remove(const void*) override { return -EINVAL; }
  long user_lookup(const void*, void*) override { return -EINVAL; }
  long user_update(const void*, const void*, uint64_t) override { return -EINVAL; }
  long get_next_key(const void*, void*) override { return -EINVAL; }
  std::vector<Pool> value_pools() override { return {{data_.data(), data_.size()}}; }

 private:
  void commit(void* sample, bool discard);
  uint64_t mask_;
  std::vector<uint8_t> data_;  // 2 * max_entries bytes
  SpinLock lock_;
  std::atomic<uint64_t> producer_pos_{0}, consumer_pos_{0};
  uint64_t pending_pos_ = 0;
};

}  // namespace knod::maps
