// A small fixed pool of worker threads for the crypto stage of ESP batches (the stage
// between the serial prepare and finish loops of src/xfrm/process.cpp). Created once and
// reused for every batch: one run() hands out `tasks` task indexes through a shared counter;
// the calling thread is worker 0 and works too, so a pool of 1 runs everything inline, and a
// run never waits for a helper to wake up (a late helper finds the tasks taken). Helpers spin
// ~50 µs for the next run, then sleep on a futex.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

namespace knod::xfrm {

class WorkerPool {
 public:
  /// `workers` threads in all, the caller included (workers - 1 std::jthread are started);
  /// 0 is taken as 1.
  explicit WorkerPool(uint32_t workers);
  ~WorkerPool();  ///< stops and joins the threads
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  uint32_t workers() const { return workers_; }

  /// Calls fn(task, worker) once for every task in [0, tasks) and returns when all calls
  /// returned. Tasks are claimed in index order; `worker` < workers() names the thread
  /// (0: the caller), never running two tasks at once. fn must not throw. Not reentrant:
  /// one run at a time per pool. No allocation.
  template <class F>
  void run(uint32_t tasks, F&& fn) {
    auto call = [](void* f, uint32_t task, uint32_t worker) {
      (*static_cast<std::remove_reference_t<F>*>(f))(task, worker);
    };
    run_raw(tasks, call, &fn);
  }

 private:
  using TaskFn = void (*)(void* ctx, uint32_t task, uint32_t worker);
  void run_raw(uint32_t tasks, TaskFn fn, void* ctx);

  struct State;
  uint32_t workers_ = 1;
  std::unique_ptr<State> st_;
};

}  // namespace knod::xfrm
