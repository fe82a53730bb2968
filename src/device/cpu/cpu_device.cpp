#include "device/cpu/cpu_device.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace knod::device {

struct CpuDevice::Pool {
  uint32_t chunk = 64;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable start_cv, done_cv;
  uint64_t generation = 0;  ///< bumped per run; workers wait for a new one
  bool stop = false;
  // The current job.
  const PacketFn* fn = nullptr;
  uint32_t count = 0;
  std::atomic<uint32_t> next{0};
  uint32_t busy = 0;  ///< workers still in the current job
  std::exception_ptr error;

  void work(uint32_t cpu) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu);
        start_cv.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
      }
      try {
        for (;;) {
          uint32_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
          if (lo >= count) break;
          uint32_t hi = std::min(count, lo + chunk);
          for (uint32_t i = lo; i < hi; ++i) (*fn)(i, cpu);
        }
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next.store(count);  // the others stop claiming
      }
      std::lock_guard lock(mu);
      if (--busy == 0) done_cv.notify_all();
    }
  }
};

CpuDevice::CpuDevice(CpuOptions opts) : pool_(std::make_unique<Pool>()) {
  uint32_t n = opts.workers ? opts.workers : std::max(1u, std::thread::hardware_concurrency());
  pool_->chunk = std::max(1u, opts.chunk);
  for (uint32_t cpu = 0; cpu < n; ++cpu)
    pool_->threads.emplace_back([this, cpu] { pool_->work(cpu); });
}

CpuDevice::~CpuDevice() {
  {
    std::lock_guard lock(pool_->mu);
    pool_->stop = true;
  }
  pool_->start_cv.notify_all();
  for (auto& t : pool_->threads) t.join();
}

uint32_t CpuDevice::workers() const {
  return uint32_t(pool_->threads.size());
}

void CpuDevice::run(uint32_t count, const PacketFn& fn) {
  if (count == 0) return;
  Pool& p = *pool_;
  std::unique_lock lock(p.mu);
  p.fn = &fn;
  p.count = count;
  p.next.store(0);
  p.error = nullptr;
  p.busy = uint32_t(p.threads.size());
  ++p.generation;
  p.start_cv.notify_all();
  p.done_cv.wait(lock, [&] { return p.busy == 0; });
  p.fn = nullptr;
  if (p.error) std::rethrow_exception(p.error);
}

}  // namespace knod::device
