// Batch timeout for latency control in persistent mode: packets are collected into a batch
// that is flushed when it holds `max_packets` packets or when `timeout_ns` have passed since
// its first packet, whichever comes first (the KNOD mailbox's batch timeout). The policy
// only; the caller keeps the packets. The clock is injectable for tests.
#pragma once

#include <cstdint>
#include <functional>

namespace knod::device::gpu {

class Batcher {
 public:
  using Clock = std::function<uint64_t()>;  ///< now, in ns (monotonic)

  /// Why a batch was flushed.
  enum class Flush { kNone, kSize, kTimeout };

  /// `max_packets` >= 1; `timeout_ns` 0 = no timeout (size only). `clock` defaults to
  /// std::chrono::steady_clock. Throws knod::Error for max_packets == 0.
  Batcher(uint32_t max_packets, uint64_t timeout_ns, Clock clock = {});

  /// Adds one packet to the pending batch (the first one starts the timeout). Returns kSize
  /// when the batch is now full and must be flushed (take()), else kNone.
  Flush add();
  /// kTimeout when a non-empty pending batch is at least timeout_ns old, else kNone.
  Flush poll() const;
  /// ns left until the pending batch times out (0: due now); UINT64_MAX when nothing is
  /// pending or there is no timeout.
  uint64_t remaining_ns() const;
  /// Ends the pending batch: returns its packet count and starts an empty one; counts the
  /// flush under `why` (kSize, kTimeout, or kNone for a final/forced flush).
  uint32_t take(Flush why);

  uint32_t pending() const { return pending_; }
  uint64_t first_ns() const { return first_ns_; }  ///< clock at the pending batch's first packet
  uint64_t flushed_by_size() const { return by_size_; }
  uint64_t flushed_by_timeout() const { return by_timeout_; }

 private:
  uint32_t max_;
  uint64_t timeout_ns_;
  Clock clock_;
  uint32_t pending_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t by_size_ = 0, by_timeout_ = 0;
};

}  // namespace knod::device::gpu
