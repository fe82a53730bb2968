#include "device/cpu/cpu_device.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace knod::device {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Step `i` of a wait that cannot sleep on a condition variable: a pause for the first `spin`
/// steps, then a yield, so that the thread waited for gets this CPU where workers outnumber CPUs.
inline void spin_then_yield(uint64_t i, uint64_t spin) {
  if (i < spin)
    cpu_relax();
  else
    std::this_thread::yield();
}

/// Pause-loop iterations a waiting thread polls before it sleeps (~20-50 us): back-to-back
/// batches start without a futex wake-up, an idle device sleeps.
constexpr int kSpin = 2000;
/// Pause-loop iterations a thread polls for the next job while a for_runs stream has jobs left
/// or the caller asked for busy polling (CpuDevice::busy_poll), before it sleeps all the same
/// (~2-5 ms): a caller gone for longer (reading a file, another process on its CPU) does not
/// keep the thread spinning, nor a thread with more workers than CPUs its CPU from the others.
constexpr int kBusySpin = 100000;
/// Smallest claim (items) once a slice is nearly done: per-claim setup stays small next to
/// the packets it covers.
constexpr uint64_t kMinClaim = 8;
/// Items (mean, ns) heavy enough that helping with another worker's slice pays for moving
/// their lines to this core (~100-300 ns an item under a hypervisor; see Pool::claim).
constexpr double kHelpItemNs = 300;
/// An owner that has not claimed for this long (ns; or four of the caller's mean claim
/// times, if longer) is taken as stalled (descheduled), and helped.
constexpr double kStallNs = 3000;
/// Weight of a run's ns per item in a worker's pace (Slice::pace): ~1/kPaceGain runs to follow
/// a change of speed.
constexpr double kPaceGain = 0.25;
/// Workers whose paces differ by less than this factor get equal home slices (the same slots
/// run after run); beyond it the slices follow the paces (split()).
constexpr double kPaceSlack = 1.05;
/// Home-slice boundaries: multiples of this many items (or of the chunk, if smaller), so that
/// no line of the batch arrays (u8 to u64 per item) is two workers'.
constexpr uint64_t kSliceAlign = 64;
/// Home-slice boundaries under a pace split: multiples of this many items (or of the chunk),
/// finer than kSliceAlign so that the shares can follow paces a few percent apart; the u32
/// and u64 arrays' lines at a boundary are still one worker's (16 * 8 bytes = two lines).
constexpr uint64_t kSplitAlign = 16;
/// Runs of a for_runs stream per job: the slices are cut once per job, from the workers'
/// paces (split()), so that a worker slower for a while (a vCPU sharing its core) gets fewer
/// slots from the next job on; its barrier, once per 32 runs, is ~1-3% of a 1024-packet run of a
/// 5 ns program. One job for the whole stream kept the first split, however far off: with a
/// pace 4x too slow from a late start, the caller ran 79% of 1000 runs alone (session 24).
constexpr uint32_t kStreamRuns = 32;
/// Pause-loop iterations between two reads of the clock while the caller waits for the others.
constexpr int kPollSpin = 16;
/// How often (ns) the waiting caller reads the other slices' ranges to tell a stalled owner.
/// Each read takes the line from its owner, whose next claim then misses: reading it every few
/// hundred ns (every kPollSpin pauses) slowed the owner's own packets 1.4-2.4x on this 2-vCPU
/// host (docs/PERFORMANCE.md, session 16); once a microsecond keeps a stall found within ~4 us.
constexpr double kWatchNs = 1000;
using Clock = std::chrono::steady_clock;

/// Worker k > 0 runs only on the k-th CPU (mod their number) of `ids`, the constructing thread's
/// affinity mask, as DPDK and VPP pin their worker cores. Unpinned, the scheduler may wake a
/// helper on the caller's CPU, where it waits for the caller's time slice until a balancer
/// moves it (icmp_echo on 2 workers, each timing its own half: an unpinned helper's best round
/// took 20-23 ns/packet in 2 of 4 runs, against 13.6-15.2 pinned). The caller stays where it
/// is. Best effort: a failure leaves the thread unpinned.
void pin_helpers(std::vector<std::thread>& threads, std::vector<int> ids, int caller_cpu) {
  if (ids.empty()) return;
  // The caller's CPU goes last: a helper pinned where the caller runs would share that CPU
  // with it until the balancer moves the caller (2 vCPUs, caller on the helper's CPU: the
  // helper missed 30-80% of 11 us batches, against 1-2% with the caller on the other CPU).
  const auto here =
      std::find(ids.begin(), ids.end(), caller_cpu >= 0 ? caller_cpu : sched_getcpu());
  if (here != ids.end()) std::rotate(ids.begin(), here, ids.end());
  for (size_t k = 0; k < threads.size(); ++k) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(ids[(k + 1) % ids.size()], &one);
    pthread_setaffinity_np(threads[k].native_handle(), sizeof(one), &one);
  }
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return ids;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) ids.push_back(c);
  return ids;
}

// The calling thread is worker 0; threads[k] is worker k + 1. A run publishes the job
// (generation); a thread joins it (`join`: generation, closed bit, active count) unless the
// caller already closed it, claims chunks (its home slice first, then the others'), and leaves. The
// caller claims too, then closes the job and waits only for the threads that joined: a thread that
// wakes late (descheduled, asleep) costs nothing; while it waits it watches their slices for a
// stalled owner (watch()). Waits poll first, then block on condition variables.
struct CpuDevice::Pool {
  static constexpr uint64_t kClosed = 1ull << 31;
  static constexpr uint64_t kActive = kClosed - 1;
  uint32_t workers = 1;
  size_t cpus = 0;          ///< CPUs of the constructing thread's affinity mask (allowed_cpus())
  uint32_t chunk = 64;      ///< the device's default; `job_chunk` is the current job's
  bool walk_apart = false;  ///< CpuOptions::walk_apart
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable start_cv, done_cv;
  std::atomic<uint64_t> generation{0};  ///< bumped per run; threads wait for a new one
  std::atomic<bool> stop{false};
  std::atomic<bool> nap{false};  ///< idle(): waiting threads sleep now instead of polling
  /// A for_runs stream has jobs left (set from its start until its last job returned): a
  /// thread done with its slice polls for the next job instead of going to sleep after kSpin
  /// pauses (its slice done ~100 us before the
  /// caller's, it slept, and each job then began with a futex wake-up: ~16 us on the caller and
  /// ~40 us before the thread joined, a third of a 32-run job of a 5 ns program; session 24).
  std::atomic<bool> stream_more{false};
  /// CpuDevice::busy_poll: threads poll for the next job up to kBusySpin pauses (as stream_more).
  std::atomic<bool> busy{false};
  /// fail() was called in the current job: take_over() stops (its items are claimed already, so
  /// emptying the slices does not stop it).
  std::atomic<bool> failed{false};
  /// Threads blocked (or about to block) on start_cv, and whether the caller blocks on done_cv:
  /// a run takes `mu` and notifies only when somebody sleeps, so that back-to-back runs with
  /// polling threads touch no mutex (each would be an atomic read-modify-write and a line
  /// fetched from the other core on both sides). Dekker-style: the waker stores the state, then
  /// loads the count; the sleeper counts itself, then re-checks the state under `mu` (both
  /// seq_cst), so one of the two sees the other.
  std::atomic<uint32_t> sleepers{0};
  std::atomic<bool> caller_sleeps{false};
  // The current job.
  RawFn fn = nullptr;
  RunsFn runs_fn = nullptr;  ///< a stream of runs (for_runs): fn is null
  void* ctx = nullptr;
  uint32_t job_chunk = 64;
  /// Runs in the current job: 1, or for_runs' count. A stream's items are (run, slot) pairs,
  /// numbered per home slice run-major (call()): a worker's claims take its slots run
  /// after run, with no barrier between runs.
  uint32_t job_runs = 1;
  uint32_t run_base = 0;  ///< the first run's number in for_runs (a long stream is several jobs)
  /// The batch cut into one contiguous slice per worker, chunk-aligned: a worker's home
  /// slice is the same packet slots batch after batch (their lines stay in its cache). What
  /// is left of it is [front, back), one word; `start` is the run's whole slice. Its worker
  /// claims from the end it walks from (CpuDevice::backward), a helper from the other end
  /// where the workers walk apart, else from the front too.
  struct alignas(64) Slice {
    std::atomic<uint64_t> range{0};  ///< front << 32 | back
    std::atomic<uint64_t> start{0};  ///< range at the start of the run (set before publishing)
    /// The owner's ns per item on its own slice, averaged over its recent runs (kPaceGain);
    /// 0 before its first. Written by the owner at the end of its slice, read by the caller
    /// between runs (split()).
    std::atomic<double> pace{0};
    /// The owner's ns per item on its own slice in its last run that had items (0 before):
    /// whether its items are light (claim()). Not the pace: one run the owner spent partly
    /// descheduled would keep that average heavy for several runs. The owner's own word.
    double last = 0;
    /// A stream's home slice in slots: [slot_lo, slot_lo + slot_len) of every run; its items
    /// are job_runs * slot_len from job_runs * slot_lo on. Set before publishing.
    uint32_t slot_lo = 0, slot_len = 0;
    /// A stream's claims of this slice in flight by its owner (take_from), counted from
    /// before the claim until its items returned: take_over() waits for them before it runs
    /// a slot's next run.
    std::atomic<uint32_t> running{0};
  };
  std::unique_ptr<Slice[]> slices;
  /// The caller's view of each slice while it waits (watch()): the range it last read and
  /// when that changed. The caller's own memory, apart from the owners' lines.
  struct Seen {
    uint64_t range = 0;
    Clock::time_point at{};
  };
  std::unique_ptr<Seen[]> seen;
  /// Items worker `cpu` ran (CpuStats::items), each on its own line, written by its worker only.
  struct alignas(64) Tally {
    std::atomic<uint64_t> items{0};
  };
  std::unique_ptr<Tally[]> tally;
  uint64_t runs = 0, late = 0, stalls = 0;    ///< CpuStats; the caller's own
  alignas(64) std::atomic<uint64_t> join{0};  ///< generation << 32 | closed | active threads
  std::exception_ptr error;                   ///< guarded by mu

  bool backward(uint32_t cpu) const { return walk_apart && workers > 1 && cpu % 2 == 0; }
  /// The current job is (part of) a for_runs stream.
  bool stream() const { return runs_fn != nullptr; }

  /// Runs items [lo, hi) of slice `s` on worker `cpu`: fn's chunk, or in a stream its pieces,
  /// one per run it touches (item j: run (j - base) / slot_len, slot slot_lo + the remainder).
  /// A backward walker's slots (backward(owner)) are mirrored within each run: its runs
  /// still come in order, each from its last slot down.
  void call(const Slice& s, uint32_t lo, uint32_t hi, uint32_t cpu) {
    if (!runs_fn) return fn(ctx, lo, hi, cpu);
    const uint64_t base = uint64_t(job_runs) * s.slot_lo, len = s.slot_len;
    const bool down = backward(uint32_t(&s - slices.get()));
    for (uint64_t j = lo; j < hi;) {
      const uint64_t run = (j - base) / len, off = (j - base) % len;
      const uint64_t n = std::min<uint64_t>(hi - j, len - off);
      const uint64_t first = down ? s.slot_lo + len - off - n : s.slot_lo + off;
      runs_fn(ctx, run_base + uint32_t(run), uint32_t(first), uint32_t(first + n), cpu);
      j += n;
    }
  }

  /// Claims and runs up to `part` (a divisor of what is left) of slice `s`, at least `least`
  /// and at most `most` items, from its front (`front_end`) or its back. Returns the items
  /// run, 0 when the slice is empty. `r`: the slice's range as last read, updated.
  uint32_t take_from(Slice& s, uint64_t& r, bool front_end, uint32_t part, uint64_t least,
                     uint64_t most, uint32_t cpu) {
    // A stream: counted before the claim (ordered before it by the release below), so that a
    // helper whose take_over() claim follows this one sees it (take_over()).
    struct InFlight {
      std::atomic<uint32_t>* n;
      explicit InFlight(std::atomic<uint32_t>* c) : n(c) {
        if (n) n->fetch_add(1, std::memory_order_relaxed);
      }
      ~InFlight() {
        if (n) n->fetch_sub(1, std::memory_order_release);
      }
      InFlight(const InFlight&) = delete;
      InFlight& operator=(const InFlight&) = delete;
    } in_flight(stream() && workers > 1 ? &s.running : nullptr);
    for (;;) {
      const uint32_t front = uint32_t(r >> 32), back = uint32_t(r);
      if (front >= back) return 0;
      const uint32_t n = uint32_t(std::min<uint64_t>(
          std::clamp<uint64_t>((back - front) / part, least, most), back - front));
      const uint32_t lo = front_end ? front : back - n, hi = front_end ? front + n : back;
      const uint64_t rest = front_end ? (uint64_t(hi) << 32 | back) : (uint64_t(front) << 32 | lo);
      // One worker: nobody else claims, and a locked compare-exchange would wait for every
      // store of the previous claim's packets to drain (~10% of a 1-packet claim, session 20).
      if (workers == 1)
        s.range.store(rest, std::memory_order_relaxed);
      else if (!s.range.compare_exchange_weak(r, rest, std::memory_order_release,
                                              std::memory_order_relaxed))
        continue;
      call(s, lo, hi, cpu);
      tally[cpu].items.store(tally[cpu].items.load(std::memory_order_relaxed) + n,
                             std::memory_order_relaxed);
      r = s.range.load(std::memory_order_relaxed);
      return n;
    }
  }

  /// Worker `cpu` runs its home slice, then helps the slices still unfinished.
  /// Own claims shrink as the slice drains (guided self-scheduling): half of what is left,
  /// between kMinClaim and job_chunk (512 packets in ~7 claims), so that a helper finds items
  /// left to take and the workers finish within a few items of each other. Only where somebody
  /// may take them: once the worker's last run says its items are light (Slice::last, ns per
  /// item, under kHelpItemNs), it claims job_chunk items at a time (512 packets in 2 claims),
  /// and shrinks again as soon as this run's items read heavy. A light owner's slice is helped
  /// only by a worker whose own items are heavy, or taken over when its owner stalls or is
  /// late, all rare. Each claim costs ~95 ns of fixed
  /// cost on a 2-vCPU host (a locked compare-exchange, the caller's per-chunk setup, a first packet
  /// not prefetched; docs/PERFORMANCE.md, session 23), ~12% of a 1024-packet batch of a 5 ns
  /// program. Helping moves the helped items' lines (frame, batch arrays) to this core, ~100-300 ns
  /// an item under a hypervisor: for XDP programs of 8-50 ns a packet it costs more than waiting
  /// for the owner, and the moved lines move back in the next batch (a minimal XDP program on 2
  /// workers, batch arrays apart, neighbours walking apart: 1.09x one worker's rate with help for
  /// every slice, 1.45x with none). So a worker helps a slice only when its items are heavy
  /// (kHelpItemNs, e.g. ESP) or its owner has not started on it (asleep, late); the caller also
  /// helps an owner that stalls (watch(): no claim for kStallNs or four of the caller's mean claim
  /// times: descheduled). A helper takes a quarter of what is left at a time. Unless the workers
  /// walk apart, a worker helps only the slices above its own, in increasing order and from their
  /// front, so that every worker runs its items in increasing order (a CPU takes its queue in
  /// order). Returns the stall time watch() goes by.
  double claim(uint32_t cpu) {
    const uint64_t most = job_chunk;
    double stall_ns = kStallNs;
    try {
      Slice& own = slices[cpu];
      const bool light = own.last > 0 && own.last < kHelpItemNs;
      const uint64_t least = std::min(most, kMinClaim);
      uint64_t own_least = workers == 1 || light ? most : least;
      const bool back = backward(cpu) && !stream();  // a stream: runs in order (call())
      const auto t0 = Clock::now();
      uint64_t r = own.range.load(std::memory_order_relaxed), items = 0, claims = 0;
      while (const uint32_t n = take_from(own, r, !back, 2, own_least, most, cpu)) {
        items += n;
        ++claims;
        // Items that turned heavy this run: shrink again at once, so that helpers find the
        // rest (one clock read a whole chunk).
        if (own_least != least && workers > 1 &&
            std::chrono::duration<double, std::nano>(Clock::now() - t0).count() >
                kHelpItemNs * double(items))
          own_least = least;
      }
      if (workers == 1) return stall_ns;
      const double own_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      if (items) {
        const double ns = own_ns / double(items), old = own.pace.load(std::memory_order_relaxed);
        own.pace.store(old == 0 ? ns : old + (ns - old) * kPaceGain, std::memory_order_relaxed);
        own.last = ns;
      }
      const bool heavy = items == 0 || own_ns / double(items) > kHelpItemNs;
      stall_ns = std::max(kStallNs, claims ? 4 * own_ns / double(claims) : 0.0);
      if (cpu == 0 && !heavy) return stall_ns;  // run_raw: after closing the job (late_owners)
      for (uint32_t k = 1; k < workers; ++k)
        if (walk_apart || cpu + k < workers)
          help(uint32_t((cpu + k) % workers), heavy, least, most, cpu);
    } catch (...) {
      fail();
    }
    return stall_ns;
  }

  /// Keeps the first exception of a run and empties every slice (the others stop claiming).
  void fail() {
    std::lock_guard lock(mu);
    if (!error) error = std::current_exception();
    failed.store(true, std::memory_order_relaxed);
    for (uint32_t w = 0; w < workers; ++w) slices[w].range.store(0);
  }

  /// claim()'s help with worker `owner`'s slice, at once and until it is empty, where that
  /// pays: heavy items, or an owner that has not claimed yet (asleep, late). From the end its
  /// owner walks toward where the workers walk apart, else from the front (the helper's items
  /// stay in order). A slice whose owner is on it is left to its owner; the caller watches
  /// it for a stall (watch()).
  void help(uint32_t owner, bool heavy, uint64_t least, uint64_t most, uint32_t cpu) {
    Slice& s = slices[owner];
    uint64_t r = s.range.load(std::memory_order_relaxed);
    // A stream's slice is taken over whole (take_over()): from an owner at work that would
    // only move its runs to this worker, not share them.
    if ((!heavy || stream()) && r != s.start.load(std::memory_order_relaxed)) return;
    take_rest(owner, r, least, most, cpu);
  }

  /// Runs what is left of worker `owner`'s slice (`r`: its range as last read) on worker
  /// `cpu`, a quarter at a time: from the end the owner walks toward where the workers walk
  /// apart, else from the front. Returns whether it ran any.
  bool take_rest(uint32_t owner, uint64_t& r, uint64_t least, uint64_t most, uint32_t cpu) {
    if (stream()) return take_over(slices[owner], r, most, cpu);
    bool took = false;
    while (take_from(slices[owner], r, !walk_apart || backward(owner), 4, least, most, cpu))
      took = true;
    return took;
  }

  /// take_rest() in a stream: claims all that is left of slice `s` at once (its owner claims
  /// nothing more), then runs it in claims of at most `most` items, in run order. A slot's
  /// run may start only after its previous run returned: items less than a run (slot_len)
  /// past the owner's claim in flight (at most `most` items before the front) wait for it
  /// (Slice::running) first. Returns whether it took the slice.
  bool take_over(Slice& s, uint64_t& r, uint64_t most, uint32_t cpu) {
    uint64_t front, back, safe;
    for (;;) {
      front = uint32_t(r >> 32), back = uint32_t(r);
      if (front >= back) return false;
      safe = std::max(front, front + s.slot_len - std::min<uint64_t>(most, s.slot_len));
      // The owner has a claim in flight and the first piece would wait for it (a slice of a
      // slot or a few, e.g. a batch an item): left to the owner, as taking it over would only
      // wait as long and then run the rest here while the owner idles. The caller's watch()
      // looks again. (A claim the owner makes after this load makes the compare-exchange fail.)
      if (front + std::min(most, back - front) > safe && s.running.load(std::memory_order_acquire))
        return false;
      if (s.range.compare_exchange_weak(r, back << 32 | back, std::memory_order_acq_rel,
                                        std::memory_order_relaxed))
        break;
    }
    for (uint64_t j = front; j < back && !failed.load(std::memory_order_relaxed);) {
      const uint64_t n = std::min(most, back - j);
      if (j + n > safe) {  // a slot's next run waits for its previous one (the owner's claim)
        for (uint64_t i = 0; s.running.load(std::memory_order_acquire); ++i)
          spin_then_yield(i, kSpin);  // the owner may need this CPU (workers > CPUs)
      }
      call(s, uint32_t(j), uint32_t(j + n), cpu);
      tally[cpu].items.store(tally[cpu].items.load(std::memory_order_relaxed) + n,
                             std::memory_order_relaxed);
      j += n;
    }
    r = s.range.load(std::memory_order_relaxed);
    return true;
  }

  /// The caller runs what is left of worker `owner`'s slice (take_rest()): whether it took
  /// any (an error taken counts, kept by fail()).
  bool rescue(uint32_t owner, uint64_t& r, uint64_t least, uint64_t most) {
    try {
      return take_rest(owner, r, least, most, 0);
    } catch (...) {
      fail();
      return true;
    }
  }

  /// The caller, the job closed with fewer threads joined than there are: runs the slices
  /// whose owners have not started on them (a thread that did not join never will). Slices of
  /// light items, which claim() left to run_raw so that the caller reads no range while its
  /// owner claims from it; help() already ran them for heavy items.
  void late_owners() {
    const uint64_t most = job_chunk, least = std::min(most, kMinClaim);
    for (uint32_t w = 1; w < workers; ++w) {
      uint64_t r = slices[w].range.load(std::memory_order_relaxed);
      if (r != slices[w].start.load(std::memory_order_relaxed)) continue;
      if (uint32_t(r >> 32) >= uint32_t(r)) continue;  // an empty slice is not late
      if (rescue(w, r, least, most)) ++late;           // declined: its owner joined and is claiming
    }
  }

  /// Cuts [0, count) into the workers' home slices (start and range): equal shares cut on
  /// multiples of kSliceAlign (or of the chunk `c`, if smaller) while the workers keep the same
  /// pace (within kPaceSlack), else shares in proportion to each worker's items per ns
  /// (1 / Slice::pace, at most 4x apart), cut on multiples of kSplitAlign (or `c`). A vCPU the
  /// hypervisor shares with others runs slower than its sibling for milliseconds at a time (session
  /// 20: one worker's ns per item 1.2-1.5x the other's over a 1000-batch round), and light items
  /// are not worth moving once a run started (claim()): the faster worker would wait for the slower
  /// one at every batch. Paces move the boundaries by a few items a run, so nearly every slot stays
  /// with its worker.
  void split(uint32_t count, uint64_t c) {
    double rate[64], total = 0, lo_pace = 0, hi_pace = 0;
    const bool paced = workers <= 64 && workers > 1;
    for (uint32_t w = 0; paced && w < workers; ++w) {
      const double pace = slices[w].pace.load(std::memory_order_relaxed);
      lo_pace = w == 0 ? pace : std::min(lo_pace, pace);
      hi_pace = std::max(hi_pace, pace);
    }
    const bool even = !paced || lo_pace <= 0 || hi_pace < lo_pace * kPaceSlack;
    for (uint32_t w = 0; !even && w < workers; ++w) {
      rate[w] = 1 / std::min(slices[w].pace.load(std::memory_order_relaxed), lo_pace * 4);
      total += rate[w];
    }
    const uint64_t unit = std::min(c, kSliceAlign), units = (count + unit - 1) / unit;
    const uint64_t fine = std::min(c, kSplitAlign);
    double cum = 0;
    uint64_t lo = 0;
    for (uint32_t w = 0; w < workers; ++w) {
      uint64_t hi;
      if (even) {
        lo = std::min<uint64_t>(units * w / workers * unit, count);
        hi = std::min<uint64_t>(units * (w + 1) / workers * unit, count);
      } else {
        cum += rate[w];
        hi = w + 1 == workers
                 ? count
                 : std::min<uint64_t>(uint64_t(double(count) * cum / total + 0.5) / fine * fine,
                                      count);
        hi = std::max(hi, lo);
        // Every worker at least `fine` items where there are enough: one given none measures
        // no pace, and its old pace would keep it idle job after job (a batch an item, 2
        // workers: a pace 3x behind rounded its share to 0; session 24).
        // Cut on multiples of fine (lo is one) except at the end.
        if (count >= uint64_t(workers) * fine && w + 1 < workers)
          hi = std::min(std::max(hi, lo + fine),
                        (count - uint64_t(workers - w - 1) * fine) / fine * fine);
      }
      // A stream: the slice's items are its slots in every run (call()).
      const uint64_t r = job_runs, items = (r * lo) << 32 | (r * hi);
      slices[w].slot_lo = uint32_t(lo);
      slices[w].slot_len = uint32_t(hi - lo);
      slices[w].start.store(items, std::memory_order_relaxed);
      slices[w].range.store(items, std::memory_order_relaxed);
      lo = hi;
    }
  }

  /// Threads still in the current job.
  uint64_t active() const { return join.load(std::memory_order_acquire) & kActive; }

  /// The caller, its own share done and the job closed, waits for the threads that joined to
  /// leave: polling while a slice still has items, then up to kSpin pauses more. Once every
  /// kWatchNs it reads the other slices' ranges: one unchanged for `stall_ns` has a stalled
  /// owner (descheduled), and the caller runs the rest of it (as help()). Returns whether the
  /// threads left.
  bool watch(double stall_ns) {
    const uint64_t most = job_chunk, least = std::min(most, kMinClaim);
    // No look before stall_ns has passed: each look takes the owner's range line, and its next
    // claim then waits for the line to come back (~0.5 us on this host); an owner that finishes
    // within stall_ns of the caller is never looked at.
    const auto begin = Clock::now();
    auto looked = begin;
    bool first = true;
    bool items_left = true;  // at the last look
    for (uint64_t i = 0; items_left || i < kSpin; ++i) {
      if (!active()) return true;
      // ms on: an owner left to finish its claim (take_over()) may need this CPU.
      spin_then_yield(i, kBusySpin);
      if (i % kPollSpin) continue;
      const auto now = Clock::now();
      if (std::chrono::duration<double, std::nano>(now - (first ? begin : looked)).count() <
          (first ? stall_ns : kWatchNs))
        continue;
      looked = now;
      items_left = false;
      for (uint32_t w = 1; w < workers; ++w) {
        uint64_t r = slices[w].range.load(std::memory_order_relaxed);
        if (uint32_t(r >> 32) >= uint32_t(r)) continue;  // empty
        items_left = true;
        if (first || r != seen[w].range) {
          seen[w] = {r, now};
        } else if (std::chrono::duration<double, std::nano>(now - seen[w].at).count() > stall_ns) {
          if (rescue(w, r, least, most))
            ++stalls;
          else  // left to its owner (take_over()): no look at its line for another stall_ns
            seen[w] = {r, now};
        }
      }
      first = false;
    }
    return !active();
  }

  void work(uint32_t cpu) {
    uint64_t seen = 0;
    for (;;) {
      for (int i = 0;
           (i < kSpin || (i < kBusySpin && (stream_more.load(std::memory_order_relaxed) ||
                                            busy.load(std::memory_order_relaxed)))) &&
           generation.load(std::memory_order_acquire) == seen &&
           !stop.load(std::memory_order_relaxed) && !nap.load(std::memory_order_relaxed);
           ++i)
        cpu_relax();
      if (generation.load(std::memory_order_acquire) == seen) {
        std::unique_lock lock(mu);
        sleepers.fetch_add(1);
        start_cv.wait(lock, [&] { return stop.load() || generation.load() != seen; });
        sleepers.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stop.load()) return;
      seen = generation.load(std::memory_order_acquire);
      uint64_t s = join.load(std::memory_order_acquire);
      bool joined = false;
      while ((s >> 32) == (seen & 0xffffffff) && !(s & kClosed))
        if (join.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) {
          joined = true;
          break;
        }
      if (!joined) continue;  // the caller finished this job without us
      claim(cpu);
      uint64_t left = join.fetch_sub(1) - 1;  // seq_cst: before the load of caller_sleeps
      if ((left & kClosed) && (left & kActive) == 0 && caller_sleeps.load()) {
        std::lock_guard lock(mu);
        done_cv.notify_all();
      }
    }
  }
};

CpuDevice::CpuDevice(CpuOptions opts) : pool_(std::make_unique<Pool>()) {
  pool_->workers = opts.workers ? opts.workers : std::max(1u, std::thread::hardware_concurrency());
  pool_->chunk = std::max(1u, opts.chunk);
  pool_->walk_apart = opts.walk_apart;
  const std::vector<int> cpus = allowed_cpus();  // the constructing thread's mask
  pool_->cpus = cpus.size();
  pool_->slices = std::make_unique<Pool::Slice[]>(pool_->workers);
  pool_->seen = std::make_unique<Pool::Seen[]>(pool_->workers);
  pool_->tally = std::make_unique<Pool::Tally[]>(pool_->workers);
  for (uint32_t cpu = 1; cpu < pool_->workers; ++cpu)
    pool_->threads.emplace_back([this, cpu] { pool_->work(cpu); });
  if (opts.pin) pin_helpers(pool_->threads, cpus, opts.caller_cpu);
}

CpuDevice::~CpuDevice() {
  {
    std::lock_guard lock(pool_->mu);
    pool_->stop.store(true);
  }
  pool_->start_cv.notify_all();
  for (auto& t : pool_->threads) t.join();
}

void CpuDevice::idle() {
  pool_->nap.store(true, std::memory_order_relaxed);
}

bool CpuDevice::busy_poll(bool on) {
  // Not with more workers than CPUs: a thread sharing the caller's CPU would spin through the
  // caller's own work.
  const bool polls = on && pool_->workers <= pool_->cpus;
  pool_->busy.store(polls, std::memory_order_relaxed);
  return polls;
}

CpuStats CpuDevice::stats() const {
  CpuStats s{pool_->runs, pool_->late, pool_->stalls, {}};
  for (uint32_t w = 0; w < pool_->workers; ++w)
    s.items.push_back(pool_->tally[w].items.load(std::memory_order_relaxed));
  return s;
}

bool CpuDevice::continues(uint32_t cpu) const {
  if (cpu >= pool_->workers || pool_->stream()) return false;
  const uint64_t r = pool_->slices[cpu].range.load(std::memory_order_relaxed);
  return uint32_t(r >> 32) < uint32_t(r);
}

uint32_t CpuDevice::workers() const {
  return pool_->workers;
}

bool CpuDevice::backward(uint32_t cpu) const {
  return pool_->backward(cpu);
}

void CpuDevice::run(uint32_t count, const PacketFn& fn) {
  run_chunks(count, [&fn](uint32_t lo, uint32_t hi, uint32_t cpu) {
    for (uint32_t i = lo; i < hi; ++i) fn(i, cpu);
  });
}

void CpuDevice::run_chunks(uint32_t count, const ChunkFn& fn) {
  run_raw(
      count, 0,
      [](void* f, uint32_t lo, uint32_t hi, uint32_t cpu) {
        (*static_cast<const ChunkFn*>(f))(lo, hi, cpu);
      },
      const_cast<ChunkFn*>(&fn));
}

void CpuDevice::run_raw(uint32_t count, uint32_t chunk, RawFn fn, void* ctx) {
  run_job(count, chunk, 1, 0, fn, nullptr, ctx);
}

void CpuDevice::runs_raw(uint32_t runs, uint32_t count, uint32_t chunk, RunsFn fn, void* ctx) {
  if (count == 0) return;
  // Jobs of kStreamRuns runs at most: the home slices follow the workers' paces from one job to
  // the next (split()), and a job numbers its items in 32 bits (Pool::Slice::range).
  const uint32_t most =
      std::max<uint32_t>(1, uint32_t(std::min<uint64_t>(kStreamRuns, (uint64_t(1) << 31) / count)));
  // Set until the last job has been published and run: a thread that sees it clear before the
  // last job's generation would go to sleep and miss that job.
  pool_->stream_more.store(runs > most, std::memory_order_relaxed);
  try {
    for (uint32_t base = 0; base < runs; base += std::min(most, runs - base))
      run_job(count, chunk, std::min(most, runs - base), base, nullptr, fn, ctx);
  } catch (...) {
    pool_->stream_more.store(false, std::memory_order_relaxed);
    throw;
  }
  pool_->stream_more.store(false, std::memory_order_relaxed);
}

void CpuDevice::run_job(uint32_t count, uint32_t chunk, uint32_t runs, uint32_t base, RawFn fn,
                        RunsFn runs_fn, void* ctx) {
  if (count == 0 || runs == 0) return;
  Pool& p = *pool_;
  p.fn = fn;
  p.runs_fn = runs_fn;
  p.job_runs = runs;
  p.run_base = base;
  p.ctx = ctx;
  p.job_chunk = chunk ? chunk : p.chunk;
  p.error = nullptr;
  p.failed.store(false, std::memory_order_relaxed);
  p.split(count, p.job_chunk);
  const bool helpers = !p.threads.empty();
  if (helpers) {
    ++p.runs;
    p.nap.store(false, std::memory_order_relaxed);
    const uint64_t gen = p.generation.load(std::memory_order_relaxed) + 1;
    p.join.store((gen & 0xffffffff) << 32, std::memory_order_relaxed);
    p.generation.store(gen);  // seq_cst: ordered before the load of `sleepers`
    if (p.sleepers.load()) {
      { std::lock_guard lock(p.mu); }  // a sleeper is now waiting or sees the new generation
      p.start_cv.notify_all();
    }
  }
  const double stall_ns = p.claim(0);
  if (helpers) {
    const uint64_t joined =
        p.join.fetch_or(Pool::kClosed, std::memory_order_acq_rel) & Pool::kActive;
    if (joined < p.workers - 1) p.late_owners();
    if (joined) {
      if (!p.watch(stall_ns)) {
        std::unique_lock lock(p.mu);
        p.caller_sleeps.store(true);  // seq_cst: ordered before the re-check of `join`
        p.done_cv.wait(lock, [&] { return p.active() == 0; });
        p.caller_sleeps.store(false, std::memory_order_relaxed);
      }
    }
  }
  p.fn = nullptr;
  p.runs_fn = nullptr;
  p.job_runs = 1;
  p.ctx = nullptr;
  std::exception_ptr err;
  {
    std::lock_guard lock(p.mu);
    err = p.error;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace knod::device
