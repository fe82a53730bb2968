#include "xfrm/workers.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace knod::xfrm {
namespace {

/// A helper spins this long for the next job before it sleeps (futex): back-to-back batches
/// hand over without a wake-up (which costs tens of µs, more in a VM); an idle pool costs
/// nothing after it.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Waits until `a` no longer holds `old` (spin for `spin`, then sleep); returns the new value.
uint32_t wait_change(const std::atomic<uint32_t>& a, uint32_t old, std::chrono::microseconds spin) {
  auto until = std::chrono::steady_clock::now() + spin;
  for (uint32_t i = 1;; ++i) {
    uint32_t v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
  }
  a.wait(old, std::memory_order_acquire);
  return a.load(std::memory_order_acquire);
}

constexpr uint64_t kClosed = 0xffffffffu;  ///< `claim` index once a job is over

}  // namespace

// A job (epoch e) is fn/ctx/tasks plus `claim` = e << 32 | next task index.
//  - run_raw writes fn/ctx/tasks, resets `done`, publishes claim = e << 32 | 0 (release), bumps
//    `epoch` to wake the helpers, works too, waits until done == tasks, then closes the job:
//    claim = e << 32 | kClosed. It never waits for a helper that has not woken up.
//  - A helper woken for epoch e claims task i with a CAS of e << 32 | i -> i + 1, so it can
//    only take a task of job e while job e is open (a late helper finds it closed or moved on
//    and goes back to sleep). After a successful claim, fn/ctx/tasks are job e's: they are
//    rewritten only after the close, which waits for this task's `done`.
struct WorkerPool::State {
  std::atomic<TaskFn> fn{nullptr};
  std::atomic<void*> ctx{nullptr};
  std::atomic<uint32_t> tasks{0};
  std::atomic<uint64_t> claim{kClosed};
  std::atomic<uint32_t> done{0};
  std::atomic<uint32_t> epoch{0};  ///< futex word the helpers sleep on
  std::atomic<bool> stop{false};
  std::vector<std::jthread> threads;

  /// Claims and runs tasks of job `e` until none is left or the job is over.
  void work(uint32_t e, uint32_t worker) {
    uint64_t c = claim.load(std::memory_order_acquire);
    for (;;) {
      uint64_t i = c & 0xffffffffu;
      if ((c >> 32) != e || i >= tasks.load(std::memory_order_relaxed)) return;
      if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      fn.load(std::memory_order_relaxed)(ctx.load(std::memory_order_relaxed), uint32_t(i), worker);
      done.fetch_add(1, std::memory_order_release);
      c = claim.load(std::memory_order_acquire);
    }
  }

  void helper(uint32_t worker) {
    uint32_t seen = 0;
    for (;;) {
      seen = wait_change(epoch, seen, kSpin);
      if (stop.load(std::memory_order_acquire)) return;
      work(seen, worker);
    }
  }
};

WorkerPool::WorkerPool(uint32_t workers)
    : workers_(workers ? workers : 1), st_(std::make_unique<State>()) {
  st_->threads.reserve(workers_ - 1);
  for (uint32_t w = 1; w < workers_; ++w)
    st_->threads.emplace_back([s = st_.get(), w] { s->helper(w); });
}

WorkerPool::~WorkerPool() {
  st_->stop.store(true, std::memory_order_release);
  st_->epoch.fetch_add(1, std::memory_order_release);
  st_->epoch.notify_all();
  st_->threads.clear();  // joins
}

void WorkerPool::run_raw(uint32_t tasks, TaskFn fn, void* ctx) {
  State& s = *st_;
  if (workers_ == 1 || tasks <= 1) {
    for (uint32_t t = 0; t < tasks; ++t) fn(ctx, t, 0);
    return;
  }
  const uint32_t e = s.epoch.load(std::memory_order_relaxed) + 1;
  s.fn.store(fn, std::memory_order_relaxed);
  s.ctx.store(ctx, std::memory_order_relaxed);
  s.tasks.store(tasks, std::memory_order_relaxed);
  s.done.store(0, std::memory_order_relaxed);
  s.claim.store(uint64_t(e) << 32, std::memory_order_release);
  s.epoch.store(e, std::memory_order_release);
  s.epoch.notify_all();
  s.work(e, 0);
  // The tasks still running are helpers' (at most one each): spin them out, yielding after a
  // while in case a helper shares this CPU.
  for (uint32_t i = 0; s.done.load(std::memory_order_acquire) != tasks; ++i)
    i < 4096 ? cpu_relax() : std::this_thread::yield();
  s.claim.store(uint64_t(e) << 32 | kClosed, std::memory_order_release);
}

}  // namespace knod::xfrm
