// Size-or-timeout batch flushing (see batcher.h).
#include "device/gpu/batcher.h"

#include <chrono>
#include <limits>

#include "base/error.h"

namespace knod::device::gpu {

Batcher::Batcher(uint32_t max_packets, uint64_t timeout_ns, Clock clock)
    : max_(max_packets), timeout_ns_(timeout_ns), clock_(std::move(clock)) {
  if (max_ == 0) throw Error("batcher: a batch holds at least 1 packet");
  if (!clock_)
    clock_ = [] {
      return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count());
    };
}

Batcher::Flush Batcher::add() {
  if (pending_ == 0) first_ns_ = clock_();
  ++pending_;
  return pending_ >= max_ ? Flush::kSize : Flush::kNone;
}

Batcher::Flush Batcher::poll() const {
  return pending_ && timeout_ns_ && remaining_ns() == 0 ? Flush::kTimeout : Flush::kNone;
}

uint64_t Batcher::remaining_ns() const {
  if (!pending_ || !timeout_ns_) return std::numeric_limits<uint64_t>::max();
  uint64_t age = clock_() - first_ns_;
  return age >= timeout_ns_ ? 0 : timeout_ns_ - age;
}

uint32_t Batcher::take(Flush why) {
  uint32_t n = pending_;
  pending_ = 0;
  if (n && why == Flush::kSize) ++by_size_;
  if (n && why == Flush::kTimeout) ++by_timeout_;
  return n;
}

}  // namespace knod::device::gpu
