// Persistent GPU sessions for `knod run --persistent` (see gpu_session.h).
#include "cli/gpu_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace knod::cli {
namespace {

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

}  // namespace

GpuSession::GpuSession(device::gpu::BatchDevice& dev, uint32_t max_batch, uint64_t timeout_ns)
    : dev_(dev), batcher_(max_batch, timeout_ns, now_ns), max_batch_(max_batch) {
  device::gpu::PersistentOptions o;
  o.max_batch = max_batch;
  o.stride = device::kFrameSize;
  dev_.start_persistent(o);
}

GpuSession::~GpuSession() {
  try {
    dev_.stop();
  } catch (...) {  // unwinding from another error: that one is reported
  }
}

void GpuSession::run(device::Batch& b) {
  const uint64_t first = batcher_.first_ns();
  using Flush = device::gpu::Batcher::Flush;
  batcher_.take(due() ? Flush::kTimeout : b.count >= max_batch_ ? Flush::kSize : Flush::kNone);
  dev_.submit(b);
  dev_.complete();
  latency_ns_.push_back(now_ns() - first);
}

void GpuSession::stop() {
  dev_.stop();
}

uint64_t percentile_ns(std::vector<uint64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace knod::cli
