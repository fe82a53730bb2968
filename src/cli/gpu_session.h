// `knod run --device cuda|gpusim --persistent [--batch-timeout-us N]`: the job's batches go
// through a persistent session (gpu::BatchDevice::start_persistent: the resident kernel fed
// through the mailbox ring) instead of one launch per batch. A batch is cut when it holds
// --batch packets or when N us have passed since its first packet was read (gpu::Batcher).
// Per batch, the latency from its first packet read to its results back is recorded.
#pragma once

#include <cstdint>
#include <vector>

#include "device/batch.h"
#include "device/gpu/batch_device.h"
#include "device/gpu/batcher.h"

namespace knod::cli {

class GpuSession {
 public:
  /// Starts the session on `dev` (program loaded) for batches of up to `max_batch` packets
  /// of device::kFrameSize bytes; `timeout_ns` 0 = flush on size only. Throws knod::Error.
  GpuSession(device::gpu::BatchDevice& dev, uint32_t max_batch, uint64_t timeout_ns);
  /// Stops the session if stop() was not called (maps then not guaranteed written back).
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  /// The job read one more packet into the batch being filled.
  void added() { batcher_.add(); }
  /// True when the batch being filled must be cut now (its first packet is timeout_ns old).
  bool due() const { return batcher_.poll() == device::gpu::Batcher::Flush::kTimeout; }
  /// Runs `b` through the session (submit, then complete): its results are in `b` on return.
  void run(device::Batch& b);
  /// Ends the session: the device's maps are written back to the host maps.
  void stop();

  /// Latency of each batch run, ns: first packet read to results back.
  const std::vector<uint64_t>& latency_ns() const { return latency_ns_; }
  uint64_t flushed_by_timeout() const { return batcher_.flushed_by_timeout(); }

 private:
  device::gpu::BatchDevice& dev_;
  device::gpu::Batcher batcher_;
  uint32_t max_batch_;
  std::vector<uint64_t> latency_ns_;
};

/// The p-th percentile (0..100, nearest rank) of `v` in ns; 0 for an empty `v`.
uint64_t percentile_ns(std::vector<uint64_t> v, double p);

}  // namespace knod::cli
