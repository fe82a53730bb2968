// The CPU device: runs the packets of a device::Batch over a pool of worker threads, each
// worker with its own cpu index (the per-CPU map slot and bpf_get_smp_processor_id of the
// packets it runs). Program-type neutral: what running packet i means (building the Run for
// an XDP frame, calling the executor, writing the verdict) is the caller's PacketFn, e.g.
//   dev.run(batch.count, [&](uint32_t i, uint32_t cpu) { rt.run_packet(jit, batch, i, cpu); });
// Also the thread pool of the ESP crypto stage (xfrm::ThreadedEngine: for_chunks over the
// CryptoOp vector, one OpenSSL engine per worker). Its own library, knod_device_cpu (threads
// only), so that xfrm links it without the GPU devices.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "device/batch.h"

namespace knod::device {

/// Runs packet `packet` on worker `cpu` (< CpuDevice::workers()). Called concurrently for
/// distinct cpus; never twice at once for the same cpu.
using PacketFn = std::function<void(uint32_t packet, uint32_t cpu)>;
/// Runs packets [begin, end) on worker `cpu`, in order, up or down as CpuDevice::backward(cpu)
/// advises (VPP-style vector processing: per-chunk setup hoisted, the next packet
/// prefetched). Same concurrency rules as PacketFn.
using ChunkFn = std::function<void(uint32_t begin, uint32_t end, uint32_t cpu)>;

struct CpuOptions {
  uint32_t workers = 0;  ///< worker threads (= cpu indexes); 0 = std::thread::hardware_concurrency
  /// Most packets a worker claims at a time: each claim costs ~40 ns of setup (an XDP
  /// runtime's per-run state, the claim itself; session 20: --chunk 64 against 4096 on one
  /// worker, 10% of a 5 ns program; ~95 ns on 2 vCPUs, session 23). Claims shrink as a
  /// slice drains only for items that are not light (see run()).
  uint32_t chunk = 256;
  /// Worker k > 0 runs only on the k-th CPU (mod their number) of the constructing thread's
  /// affinity mask (`taskset` narrows it), counted from the caller's CPU (`caller_cpu`), so
  /// that worker 1 is not on the caller's; worker 0, the calling thread, is not pinned.
  bool pin = true;
  /// The CPU the calling thread runs batches on (a caller that pins itself there); -1: the
  /// one it runs on when the device is built.
  int caller_cpu = -1;
  /// Whether even workers (with several) walk their home slice from the back
  /// (CpuDevice::backward), for the caches' sake (docs/PERFORMANCE.md, session 11). Only for a
  /// caller whose results do not depend on the order one worker runs its items in (ESP
  /// crypto, xdp::Runtime::order_free programs); otherwise every worker runs its own slice in
  /// increasing order, as one CPU takes its receive queue.
  bool walk_apart = false;
};

/// What a CpuDevice's runs did with their items since it was built (CpuDevice::stats): how the
/// work was shared, and how often the caller had to run a worker's slice for it.
struct CpuStats {
  uint64_t runs = 0;    ///< runs with more than one worker and at least one item
  uint64_t late = 0;    ///< home slices the caller ran because their worker had not started on them
  uint64_t stalls = 0;  ///< home slices the caller finished for a worker that stopped claiming
  /// Items (packets, crypto ops; whole batches where a caller makes a batch one item, as
  /// `knod run`'s read-ahead and `knod bench`'s jit-N do) each worker ran, by cpu index.
  std::vector<uint64_t> items;
};

/// The CPUs of the calling thread's affinity mask (`taskset` narrows it), in increasing
/// order; empty when the mask cannot be read.
std::vector<int> allowed_cpus();

class CpuDevice {
 public:
  explicit CpuDevice(CpuOptions opts = {});
  ~CpuDevice();  ///< joins the workers
  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  uint32_t workers() const;
  /// Whether worker `cpu` walks its home slice from the back (even workers, when there are
  /// several and CpuOptions::walk_apart): neighbouring workers then start at their shared boundary
  /// and walk apart, and a worker's hardware prefetcher, running ahead of its sweep, fetches its
  /// own next lines instead of the first lines of its neighbour's slice (which that neighbour then
  /// has to take back, line by line, in the next batch; docs/PERFORMANCE.md, session 11). Its
  /// claims come from the back; a ChunkFn does best to run [begin, end) from end - 1 down
  /// (xdp::Runtime::run_packets' `backward`). Cache advice for callers that said any order
  /// is correct (walk_apart).
  bool backward(uint32_t cpu) const;
  /// Inside a ChunkFn: whether worker `cpu`'s home slice has items left, so that its next
  /// claim starts where this one ends (in its walking direction) and the ChunkFn may prefetch
  /// past its end (xdp::Runtime::run_packets' `ahead`). False while a worker runs another
  /// worker's items. Reads the worker's own slice (its own line).
  bool continues(uint32_t cpu) const;
  /// Tells the worker threads that no run follows soon: they sleep at once instead of polling
  /// for the next run (~20-50 us of a core each), e.g. while other work takes the cores. The
  /// next run wakes them (a futex wake-up, a few us later than from polling).
  void idle();
  /// Busy polling (as the kernel's SO_BUSY_POLL): between runs the worker threads poll for the
  /// next one for up to ~2-5 ms (100000 pauses) instead of ~20-50 us before they sleep, for a
  /// caller that does a few hundred us of its own work between runs (knod run reading and
  /// writing a capture): a thread asleep joins a run ~40 us after it starts, by when the caller
  /// may have taken its items (a late owner's, run()). Costs a core each while on; idle() still
  /// puts the threads to sleep at once. Refused (polling stays off) with more workers than CPUs
  /// in the affinity mask of the thread that built the device (CpuOptions::pin's mask), or an
  /// unreadable mask. Returns whether the threads now busy poll.
  bool busy_poll(bool on);
  /// Counters since construction. Call between runs (not during one).
  CpuStats stats() const;
  /// Calls fn(i, cpu) once for every i in [0, count) and returns when all calls returned.
  /// The calling thread is worker 0 (workers = 1 runs everything inline, no thread hand-off).
  /// [0, count) is cut into one contiguous home slice per worker, on multiples of 64 items
  /// (or of `chunk`, if smaller): equal slices, the same slots batch after batch so that their
  /// cache lines stay put, while the workers run their items at the same pace; where one
  /// worker has been slower than another over its last runs (a vCPU sharing its core with
  /// others), the slices follow each worker's ns per item, a few items' move a run. A worker
  /// claims its slice from one end (the front, or the back where backward(cpu)), `chunk`
  /// items at a time, and fewer (half of what is left, at least 8) as the slice drains unless
  /// its last run's items were light (under ~300 ns each: nobody helps then); then
  /// it helps with the slices still unfinished (walk_apart: any, from the end their owners
  /// walk toward; else only those above its own, from their front, so that each worker runs
  /// its items in increasing order), but only where that pays for moving the items' lines: heavy
  /// items (mean over ~300 ns), an owner that has not started (asleep, late) or one that stalls
  /// (descheduled). So a late or descheduled worker delays the others by a few us at most, and
  /// workers of light items do not trade slots. If fn throws, the first exception is rethrown here
  /// after the others finish. Not reentrant (one run at a time).
  void run(uint32_t count, const PacketFn& fn);
  /// run(batch.count, fn).
  void run(const Batch& batch, const PacketFn& fn) { run(batch.count, fn); }
  /// run() by chunks: fn(begin, end, cpu) for consecutive claims of at most `chunk` packets.
  void run_chunks(uint32_t count, const ChunkFn& fn);
  /// `runs` runs of [0, count) as one stream: fn(run, begin, end, cpu) for every item of every
  /// run, run in [0, runs), [begin, end) within one run. Each worker takes its home slice's
  /// slots (cut as run()'s) run after run without waiting for the other
  /// workers between runs: no barrier per run, only one at the end (the kernel's CPUs, each
  /// on its own receive queue, wait for nobody either). A worker runs its slots in increasing
  /// run order, so runs may share buffers (knod bench's workers each rerun their batch); two runs
  /// of a slot never overlap, also where a stalled or late owner's items are taken over (run()'s
  /// rules; the helper waits for the owner's claim in flight). Jobs of at most 32 runs, the home
  /// slices re-cut between two from the workers' paces; a thread polls between the jobs of a
  /// stream. Claims of at most `chunk` items (0: the device's). A worker that walks down
  /// (backward()) gets each run's slots mirrored, its runs still in order: [begin, end) is best run
  /// from end - 1 down; continues() is false throughout (a claim may end where a run does). Returns
  /// when all calls returned; exceptions as run().
  template <class F>
  void for_runs(uint32_t runs, uint32_t count, uint32_t chunk, F&& fn) {
    auto call = [](void* f, uint32_t run, uint32_t lo, uint32_t hi, uint32_t cpu) {
      (*static_cast<std::remove_reference_t<F>*>(f))(run, lo, hi, cpu);
    };
    runs_raw(runs, count, chunk, call, const_cast<void*>(static_cast<const void*>(&fn)));
  }
  /// run_chunks with any callable and claims of `chunk` items (0: the device's), without a
  /// std::function (no allocation per call).
  template <class F>
  void for_chunks(uint32_t count, uint32_t chunk, F&& fn) {
    auto call = [](void* f, uint32_t lo, uint32_t hi, uint32_t cpu) {
      (*static_cast<std::remove_reference_t<F>*>(f))(lo, hi, cpu);
    };
    run_raw(count, chunk, call, const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using RawFn = void (*)(void* ctx, uint32_t begin, uint32_t end, uint32_t cpu);
  using RunsFn = void (*)(void* ctx, uint32_t run, uint32_t begin, uint32_t end, uint32_t cpu);
  void run_raw(uint32_t count, uint32_t chunk, RawFn fn, void* ctx);
  void runs_raw(uint32_t runs, uint32_t count, uint32_t chunk, RunsFn fn, void* ctx);
  void run_job(uint32_t count, uint32_t chunk, uint32_t runs, uint32_t base, RawFn fn,
               RunsFn runs_fn, void* ctx);
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

}  // namespace knod::device
