// `knod bench`: XDP program speed, ns/packet and Mpps, on the reference interpreter, the CPU
// JIT on 1 thread and on N threads, and (--vs-kernel) the kernel's own JIT through
// BPF_PROG_TEST_RUN, on the same packets with the same map preload. See docs/PERFORMANCE.md.
//
// Measurement (both sides see each packet `repeat` times, changes accumulating):
//  - the kernel's test runs and knod's 1-thread columns run on one CPU (one_cpu()).
//  - kernel: per packet one BPF_PROG_TEST_RUN with repeat N; its `duration` (mean ns per
//    repeat, net/bpf/test_run.c bpf_test_timer) averaged over the capture's packets. The
//    kernel does not re-initialise the xdp_buff between repeats (only live-frames mode does):
//    repeat k runs on what repeat k-1 left (head/tail moves, rewritten bytes).
//  - kern-N (with several workers): the same test runs from N threads at once, one per CPU,
//    each from its own place in the capture; the kernel's own N/1 scaling (KernelColumn).
//  - knod: the whole capture is one batch (repeated whole up to --min-batch packets); it runs
//    `repeat` times on the CPU device without resetting the slots between passes (same
//    accumulation); time / (repeat * packets), where time is the thread's CPU time with 1
//    worker (the kernel's loop is not preemptible either) and wall time with N workers.
//    jit-N: one such batch per worker, as N receive queues each deliver the capture (the
//    kern-N column's threads too), each worker running whole batches (CpuDevice::for_runs,
//    one batch an item): repeat / N passes over the N batches, the same packets in all.
//    --reset restores every slot before each pass (untimed): each run sees the original packet.
//  - ceil (with a CPU per worker): jit-1 also on each of jit-N's other CPUs, one at a time;
//    1 + the sum of jit-1 / (jit-1 on CPU k): the N/1 those CPUs give with no hand-off and no
//    line two of them write, what jit-N/jit-1 can be read against (vCPUs differ in speed).
//  - every cell is the fastest of --rounds rounds; all columns of all rows, the kernel's
//    included, take turns round by round (knod's each after one untimed pass), so a slow
//    stretch of the host hits them alike (a kernel cell's packet keeps its fastest round).
//    Two compute loops on 1 and N workers run in the same rounds: the host's own N/1
//    ceilings (HostLoop), printed with the geomean scaling.
#include <fmt/core.h>
#include <linux/bpf.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "base/error.h"
#include "cli/bundled_examples.h"
#include "cli/command.h"
#include "cli/xdp_job.h"
#include "cli/xfrm_bench.h"
#include "device/cpu/batch_store.h"
#include "device/cpu/cpu_device.h"
#include "io/map_json.h"
#include "io/pcap.h"
#include "jit/executor.h"
#include "kernel/object.h"
#include "loader/object.h"
#include "xdp/runtime.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct BenchArgs {
  std::vector<std::string> specs;  ///< OBJ or OBJ:PROG
  std::string prog, pcap, map_load, examples, pcap_dir, device = "interp,cpu";
  uint32_t repeat = 1000, workers = 0, max_packets = 16384, min_batch = 1024;
  uint32_t rounds = 3;  ///< each cell: the fastest of this many rounds of `repeat` runs
  bool vs_kernel = false, reset = false;
};

/// One benchmark row: a program, its preload and its capture.
struct Case {
  std::string label, obj, prog, maps, pcap;
};

/// The bundled examples (examples/xdp/README.md) and the capture each acts on.
using ExampleDef = knod::cli::BundledExample;
constexpr const auto& kExamples = knod::cli::kBundledExamples;

/// The capture as one batch: frames at XDP_PACKET_HEADROOM, plus a pristine copy for --reset.
/// `min_batch`: the capture is repeated whole until the batch holds at least that many
/// packets (every packet the same number of times, so per-packet means are unchanged).
struct Packets {
  /// `shift`: slot i holds packet (i + shift) mod the batch size (jit-N's batch q starts at
  /// capture packet q * distinct / N, as kern-N's thread q does).
  Packets(const std::string& path, uint32_t max_packets, uint32_t min_batch = 1, size_t shift = 0)
      : pkts(read(path, max_packets, min_batch, distinct, runts, reader_skips, cut)),
        store(uint32_t(pkts.size())) {
    if (!pkts.empty())
      std::rotate(pkts.begin(), pkts.begin() + std::ptrdiff_t(shift % pkts.size()), pkts.end());
    for (uint32_t i = 0; i < store.capacity(); ++i) store.b.ingress_ifindex[i] = 1;
    reset();
  }
  void reset() {
    for (size_t i = 0; i < pkts.size(); ++i) {
      uint8_t* slot = store.slot(uint32_t(i));
      std::memset(slot, 0, knod::device::kFrameSize);
      std::memcpy(slot + knod::device::kXdpHeadroom, pkts[i].data(), pkts[i].size());
      b.data_off[i] = knod::device::kXdpHeadroom;
      b.data_len[i] = uint32_t(pkts[i].size());
      b.meta_len[i] = 0;
    }
  }
  static std::vector<std::vector<uint8_t>> read(const std::string& path, uint32_t max_packets,
                                                uint32_t min_batch, size_t& distinct, size_t& runts,
                                                std::string& reader_skips, std::string& cut) {
    std::vector<std::vector<uint8_t>> out;
    knod::io::PcapReader in(path);
    knod::io::Packet p;
    while (out.size() < max_packets && in.next(p)) {
      if (p.data.size() >= knod::xdp::kEthHlen)
        out.push_back(p.data);  // as knod run, test_run
      else
        ++runts;
    }
    using knod::io::SkipReason;
    for (SkipReason r : {SkipReason::kTooLarge, SkipReason::kSnapped})
      if (const uint64_t n = in.skipped_count(r))
        reader_skips += fmt::format("{}{} {}", reader_skips.empty() ? "" : ", ", n,
                                    knod::io::skip_reason_name(r));
    if (in.truncated() && out.empty())  // error(): libpcap's message, which names the file
      throw knod::Error(
          fmt::format("{} (the capture is cut short before any usable packet)", in.error()));
    if (const uint64_t read = in.packets() + in.skipped().size(); in.truncated())  // as knod run
      cut = knod::io::cut_short_note(in.error(), read);
    if (out.empty())
      throw knod::Error(fmt::format("{}: no usable packets (none of {} to {} bytes)", path,
                                    knod::xdp::kEthHlen, knod::device::kMaxPacket));
    distinct = out.size();
    while (out.size() < min_batch)
      for (size_t i = 0; i < distinct; ++i) out.push_back(out[i]);
    return out;
  }
  /// What bench leaves out (as knod run): the packets of under ETH_HLEN bytes (runts), and
  /// what the reader skipped (kTooLarge, kSnapped: "N reason, ..."), within --max-packets.
  std::string skipped_note() const {
    std::string s = reader_skips;
    if (runts)
      s += fmt::format("{}{} shorter than ETH_HLEN (14 bytes)", s.empty() ? "" : ", ", runts);
    return s;
  }
  size_t distinct = 0;  ///< packets from the capture (pkts repeats them up to min_batch)
  size_t runts = 0;
  std::string reader_skips;
  std::string cut;  ///< the reader's error where the capture ends inside a record, else empty
  std::vector<std::vector<uint8_t>> pkts;
  knod::device::BatchStore store;
  knod::device::Batch& b = store.b;
};

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}
double wall_ns() {
  return std::chrono::duration<double, std::nano>(Clock::now().time_since_epoch()).count();
}

/// The CPU of the 1-thread measurements: the first of the bench thread's affinity mask at
/// its first call. The kernel's test runs and knod's 1-thread columns (interp, jit-1) run
/// there (ScopedPin), so a host that slows one vCPU slows both sides (before, the kernel ran
/// on CPU 0 and jit-1 wherever: icmp_echo's kernel cell read 9.2 ns in one run, 4.8 in the
/// next). jit-N's caller too, its helpers pinned to the other CPUs (CpuOptions::caller_cpu).
int one_cpu() {
  static const int cpu = [] {
    const std::vector<int> ids = knod::device::allowed_cpus();
    return ids.empty() ? -1 : ids.front();
  }();
  return cpu;
}

/// This thread on CPU `cpu` (>= 0) until destroyed, then its mask as before.
class ScopedPin {
 public:
  explicit ScopedPin(int cpu) {
    if (cpu < 0 || sched_getaffinity(0, sizeof(old_), &old_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~ScopedPin() {
    if (pinned_) sched_setaffinity(0, sizeof(old_), &old_);
  }
  ScopedPin(const ScopedPin&) = delete;
  ScopedPin& operator=(const ScopedPin&) = delete;

 private:
  cpu_set_t old_{};
  bool pinned_ = false;
};

struct Result {
  double ns = NAN;  ///< ns per packet
  size_t packets = 0;
  uint64_t verdicts[5] = {};  ///< last pass
  /// jit-N's hand-off over its timed rounds (device::CpuStats): device jobs, batches run,
  /// home slices the caller ran for a worker that joined late or stalled, batches run (items),
  /// batches worker 0 ran.
  uint64_t runs = 0, batches = 0, late = 0, stalls = 0, items = 0, caller_items = 0;
};

/// How long a round's untimed passes may wait for every worker to join (Column::round).
constexpr double kWakeNs = 20e6;

/// One knod column (interp, jit-1 or jit-N) of one row: its own object and preload, so every
/// column starts from the same map state, its batch and its CPU device. `round()` times one
/// round; bench() alternates the columns' rounds, so that a stretch of time the host gives
/// the VM less CPU slows every column's rounds alike instead of one whole column.
class Column {
 public:
  /// `cpu`: where the round runs (its worker 0, the caller); jit-N's other workers are pinned
  /// to the next CPUs of the mask. A 1-worker column on another CPU than one_cpu() is one of
  /// the ceiling's (bench()).
  Column(const Case& c, const std::string& device, uint32_t workers, const BenchArgs& a,
         int cpu = one_cpu())
      : a_(a),
        obj_(load(c, workers)),
        rt_(obj_, c.prog, runtime_options(workers)),
        pk_(c.pcap, a.max_packets, a.min_batch),
        dev_(knod::device::CpuOptions{workers, knod::device::CpuOptions{}.chunk, true, cpu,
                                      rt_.order_free()}),
        cpu_(cpu),
        cpu_clock_(workers == 1) {
    ex_ = knod::cli::make_executor(device);  // as knod run: interp, or the JIT for xdp_md
    if (auto* jit = dynamic_cast<knod::jit::JitExecutor*>(ex_.get())) {
      jit->compile(rt_.program(), &rt_.env(), /*slot_loop=*/true);  // what bind() runs
      for (const knod::vm::Program* p : rt_.env().programs)  // tail-call targets: compile now
        if (p) jit->compile(*p, &rt_.env());
    }
    r_.packets = pk_.distinct;
    for (uint32_t q = 1; q < workers; ++q)
      more_.push_back(std::make_unique<Packets>(c.pcap, a.max_packets, a.min_batch,
                                                q * pk_.distinct / workers));
  }

  /// The entry program's compile time (ms wall, ms CPU): the faster of two compiles, each on
  /// a fresh object and executor freed before the next (so the second finds the first's
  /// memory, as every compile after the first in a knod process does). The host preempting
  /// the vCPU during one compile is not the compiler's cost.
  static std::pair<double, double> compile_time(const Case& c, uint32_t workers) {
    double wall = INFINITY, cpu = INFINITY;
    for (int k = 0; k < 2; ++k) {
      knod::loader::Object obj = load(c, workers);
      knod::xdp::Runtime rt(obj, c.prog, runtime_options(workers));
      auto ex = knod::cli::make_executor("cpu");
      const auto& cp =
          static_cast<knod::jit::JitExecutor&>(*ex).compile(rt.program(), &rt.env(), true);
      wall = std::fmin(wall, cp.compile_ms);
      cpu = std::fmin(cpu, cp.compile_cpu_ms);
    }
    return {wall, cpu};
  }

  /// One round of `repeat` passes over the batch (jit-N: repeat / N passes over N batches, one
  /// per worker); keeps the fastest round's ns per packet.
  void round() {
    const uint32_t w = dev_.workers();
    const auto batch = [&](uint32_t q) -> knod::device::Batch& {
      return q == 0 ? pk_.b : more_[q - 1]->b;
    };
    // `runs` passes over the w batches as one stream (no barrier between two passes), each
    // worker on its own batch (a batch an item: home slices of one item each).
    const auto passes = [&](uint32_t runs) {
      dev_.for_runs(runs, w, 1, [&](uint32_t, uint32_t lo, uint32_t hi, uint32_t cpu) {
        for (uint32_t q = lo; q < hi; ++q)
          rt_.run_packets(*ex_, batch(q), 0, batch(q).count, cpu, false, false);
      });
    };
    // One worker runs on this thread (CpuDevice: the caller is worker 0): its CPU time, which
    // like the kernel's non-preemptible test_run loop excludes time the scheduler gave to
    // other processes. N workers: wall time (what parallelism buys). One clock read around
    // all repeats (a CPU-time read is a system call, ~1-3 us under a hypervisor: per batch it
    // would add ns to every packet); with --reset, around each repeat so that restoring the
    // packets is not counted.
    const auto now = [&] { return cpu_clock_ ? thread_cpu_ns() : wall_ns(); };
    const ScopedPin pin(cpu_);  // the kernel's CPU (one_cpu()); jit-N's helpers were pinned apart
    const uint32_t runs = (a_.repeat + w - 1) / w;
    double total_ns = 0;
    // Untimed passes first: the other columns ran in between, so this one's workers have gone
    // to sleep and its lines left the caches; a round measures the steady state. A sleeping
    // worker's vCPU took 0.1-5 ms to wake on a 2-vCPU guest (session 20: the caller ran the
    // helper's slice alone in the first 5-1500 batches of a round), so the passes go on until
    // one of them had no late worker (CpuStats::late), for at most kWakeNs.
    const double wake_by = wall_ns() + kWakeNs;
    for (uint64_t late = ~0ull; late != dev_.stats().late && wall_ns() < wake_by;) {
      late = dev_.stats().late;
      passes(1);
    }
    const knod::device::CpuStats before = dev_.stats();
    if (!a_.reset) {
      const double t0 = now();
      passes(runs);
      total_ns = now() - t0;
    } else {
      for (uint32_t i = 0; i < runs; ++i) {
        pk_.reset();
        for (auto& m : more_) m->reset();
        const double t0 = now();
        passes(1);
        total_ns += now() - t0;
      }
    }
    r_.ns = std::fmin(r_.ns, total_ns / (double(runs) * w * pk_.b.count));
    const knod::device::CpuStats after = dev_.stats();
    r_.runs += after.runs - before.runs;
    r_.batches += uint64_t(runs) * w;
    r_.late += after.late - before.late;
    r_.stalls += after.stalls - before.stalls;
    r_.caller_items += after.items[0] - before.items[0];
    for (size_t k = 0; k < after.items.size(); ++k) r_.items += after.items[k] - before.items[k];
    dev_.idle();  // the next column's round starts now: its cores, not this one's polling
  }

  const Packets& packets() const { return pk_; }
  /// The fastest round so far, the compile times and the last pass's verdicts.
  Result result() const {
    Result r = r_;
    for (uint32_t i = 0; i < pk_.b.count; ++i)
      ++r.verdicts[pk_.b.verdict[i] < 5 ? pk_.b.verdict[i] : 0];
    return r;
  }

 private:
  static knod::loader::Object load(const Case& c, uint32_t workers) {
    knod::loader::LoadOptions lo;
    lo.ncpus = workers;
    knod::loader::Object obj = knod::loader::load_object(c.obj, lo);
    if (!c.maps.empty())
      knod::io::apply_map_preload(knod::io::read_map_preload(c.maps), obj, c.maps);
    return obj;
  }
  static knod::xdp::Options runtime_options(uint32_t workers) {
    knod::xdp::Options xo;
    xo.ncpus = workers;
    return xo;
  }

  const BenchArgs& a_;
  knod::loader::Object obj_;
  knod::xdp::Runtime rt_;
  Packets pk_;
  std::vector<std::unique_ptr<Packets>> more_;  ///< jit-N: batches 1..N-1, as pk_
  knod::device::CpuDevice dev_;
  int cpu_;
  bool cpu_clock_;
  std::unique_ptr<knod::vm::Executor> ex_;
  Result r_;
};

/// The host's own ceiling for the N/1 column: compute loops (no memory traffic, no shared
/// data) on 1 worker and on N workers of a CpuDevice, timed like the jit columns and run in
/// the same rounds. On a dedicated machine both scale N; on a shared VM they show what the
/// host gave during the run, so jit-N/jit-1 can be read against them. Two loops, because
/// vCPUs that share a physical core (SMT siblings) split its execution ports: a dependent
/// chain (low IPC) still scales there, a wide loop of independent chains, as issue-bound as a
/// JIT-compiled XDP program (IPC 4-5), does not.
class HostLoop {
 public:
  explicit HostLoop(uint32_t workers)
      : one_(knod::device::CpuOptions{1, 1, true, one_cpu()}),
        n_(workers),
        all_(knod::device::CpuOptions{workers, 1, true, one_cpu()}) {}
  void round() {
    const ScopedPin pin(one_cpu());  // as the columns' rounds
    pass<false>(all_, n_, wall_ns);  // wakes the workers, as the columns' untimed pass does
    for (int wide = 0; wide < 2; ++wide) {
      Ceiling& c = ceiling_[wide];
      const auto run = [&](knod::device::CpuDevice& dev, uint32_t units, auto now) {
        return wide ? pass<true>(dev, units, now) : pass<false>(dev, units, now);
      };
      c.ns1 = std::fmin(c.ns1, run(one_, kUnits, thread_cpu_ns) / kUnits);
      c.nsn = std::fmin(c.nsn, run(all_, kUnits * n_, wall_ns) / (kUnits * n_));
    }
    // An empty batch, one item per worker: the hand-off alone (publish, join, wait).
    const double t0 = wall_ns();
    for (int k = 0; k < kHandoffs; ++k) all_.for_chunks(n_, 1, [](uint32_t, uint32_t, uint32_t) {});
    handoff_ns_ = std::fmin(handoff_ns_, (wall_ns() - t0) / kHandoffs);
    all_.idle();
  }
  /// Units per ns on N workers over units per ns on one (NaN before the first round): the
  /// dependent chain (`wide` false) or the independent chains.
  double scaling(bool wide) const { return ceiling_[wide].ns1 / ceiling_[wide].nsn; }
  /// ns one CpuDevice run of an empty batch takes on N workers (the fastest round's mean): the
  /// fixed cost every jit-N pass pays on top of its packets, mostly cache lines moving
  /// between the workers' CPUs (docs/PERFORMANCE.md, session 18).
  double handoff_ns() const { return handoff_ns_; }

 private:
  static constexpr uint32_t kUnits = 256;  ///< per worker and round, ~10 us each
  static constexpr int kHandoffs = 200;    ///< empty runs per round
  struct Ceiling {
    double ns1 = INFINITY, nsn = INFINITY;
  };
  template <bool kWide, class Now>
  double pass(knod::device::CpuDevice& dev, uint32_t units, Now now) {
    const double t0 = now();
    dev.for_chunks(units, 1, [&](uint32_t lo, uint32_t hi, uint32_t) {
      for (uint32_t u = lo; u < hi; ++u)
        sink_.fetch_add(kWide ? wide(u) : chain(u), std::memory_order_relaxed);
    });
    return now() - t0;
  }
  /// ~10 us of dependent multiply-xorshift steps (a chain the CPU cannot overlap).
  static uint64_t chain(uint64_t x) {
    for (int i = 0; i < 20000; ++i) x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull + 1;
    return x;
  }
  /// ~10 us of 8 independent add/xor chains (register only: an empty asm keeps each step).
  static uint64_t wide(uint64_t x) {
    uint64_t a = x, b = x + 1, c = x + 2, d = x + 3, e = x + 4, f = x + 5, g = x + 6, h = x + 7;
    for (uint64_t i = 0; i < 20000; ++i) {
      a += i, b ^= a, c += b, d ^= i, e += d, f ^= e, g += i, h ^= g;
      asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
  }
  knod::device::CpuDevice one_;
  uint32_t n_;
  knod::device::CpuDevice all_;
  Ceiling ceiling_[2];
  double handoff_ns_ = INFINITY;
  std::atomic<uint64_t> sink_{0};  ///< keeps the loops' results alive
};

/// The kernel's columns: BPF_PROG_TEST_RUN with repeat N per packet. kernel (1 CPU): every
/// test run on one_cpu(). A round runs every packet once; each packet keeps its fastest
/// round's `duration` (mean ns per repeat), and the cell is their mean over the capture.
/// kern-N (`cpus` > 1, its own object and maps): the kernel's own scaling, as the kernel runs
/// a program on N CPUs that take packets at once (one RX queue each): N threads, each pinned to
/// one CPU of the bench's mask (the first on one_cpu()), start a round together and run every
/// packet, thread t from packet t * n / N on (so that they run different packets at the same
/// time, as knod's workers do their slices); each (thread, packet) keeps its fastest round,
/// and the cell is their mean divided by N: ns per packet of the N CPUs together, on the
/// kernel's own clock (it stops the timer while the thread is rescheduled). The threads' runs
/// overlap but for the round's last packets. Rounds take turns with knod's columns' (bench()),
/// so that a slow stretch of the host hits the kernel and knod alike.
class KernelColumn {
 public:
  KernelColumn(const Case& c, const BenchArgs& a, uint32_t cpus = 1)
      : a_(a), prog_(c.prog), ko_(c.obj), pk_(c.pcap, a.max_packets), cpus_(std::max(1u, cpus)) {
    if (!c.maps.empty()) ko_.preload(knod::io::read_map_preload(c.maps), c.maps);
    best_.assign(size_t(cpus_) * pk_.pkts.size(), INFINITY);
  }
  void round() {
    if (cpus_ == 1) {
      const ScopedPin pin(one_cpu());
      run_all(0);
    } else {
      std::vector<int> ids = knod::device::allowed_cpus();
      const auto here = std::find(ids.begin(), ids.end(), one_cpu());
      if (here != ids.end()) std::rotate(ids.begin(), here, ids.end());
      std::atomic<uint32_t> ready{0};
      std::atomic<bool> go{false};
      errors_.assign(cpus_, nullptr);
      const auto thread = [&](uint32_t t) {
        try {
          const ScopedPin pin(ids.empty() ? -1 : ids[t % ids.size()]);
          ready.fetch_add(1);
          while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
          run_all(t);
        } catch (...) {
          errors_[t] = std::current_exception();
        }
      };
      std::vector<std::thread> threads;
      struct Join {  // also when a thread cannot be started: the others let go, then joined
        std::atomic<bool>& go;
        std::vector<std::thread>& threads;
        ~Join() {
          go.store(true, std::memory_order_release);
          for (std::thread& th : threads) th.join();
        }
      } join{go, threads};
      for (uint32_t t = 1; t < cpus_; ++t) threads.emplace_back(thread, t);
      while (ready.load() < cpus_ - 1) std::this_thread::yield();
      go.store(true, std::memory_order_release);
      thread(0);
    }
    if (cpus_ > 1) {
      for (const std::exception_ptr& e : errors_)
        if (e) std::rethrow_exception(e);
    }
    ++rounds_;
  }
  Result result() const {
    Result r = r_;
    r.packets = pk_.pkts.size();
    double sum = 0;
    for (double ns : best_) sum += ns;
    r.ns = best_.empty() || rounds_ == 0 ? NAN : sum / double(best_.size()) / double(cpus_);
    return r;
  }

  const Packets& packets() const { return pk_; }

 private:
  /// Thread `t`'s pass: every packet once, from packet t * n / cpus_ on.
  void run_all(uint32_t t) {
    const size_t n = pk_.pkts.size(), from = size_t(t) * n / cpus_;
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (from + j) % n;
      const knod::kernel::TestRun k = ko_.test_run(prog_, pk_.pkts[i], a_.repeat);
      double& best = best_[size_t(t) * n + i];
      best = std::min(best, double(k.duration_ns));
      if (rounds_ == 0 && t == 0) ++r_.verdicts[k.retval < 5 ? k.retval : 0];
    }
  }

  const BenchArgs& a_;
  std::string prog_;
  knod::kernel::Object ko_;
  Packets pk_;
  uint32_t cpus_;
  std::vector<double> best_;                ///< per thread and packet, ns per repeat
  std::vector<std::exception_ptr> errors_;  ///< per thread, of the current round
  uint32_t rounds_ = 0;
  Result r_;  ///< verdicts of the first round (thread 0)
};

std::string cell(double v, const char* fmt_spec = "{:.1f}") {
  return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(fmt_spec), v);
}
double mpps(double ns) {
  return std::isnan(ns) || ns <= 0 ? NAN : 1e3 / ns;
}

std::vector<Case> cases(const BenchArgs& a) {
  std::vector<Case> out;
  if (!a.examples.empty()) {
    fs::path dir(a.examples);
    fs::path src = fs::path(KNOD_SOURCE_DIR) / "examples";
    fs::path pcaps = a.pcap_dir.empty() ? src / "pcap" : fs::path(a.pcap_dir);
    for (const ExampleDef& e : kExamples) {
      fs::path obj = dir / (std::string(e.name) + ".o");
      if (!fs::exists(obj)) continue;
      fs::path maps = dir / (std::string(e.name) + ".maps.json");
      if (!fs::exists(maps)) maps = src / "xdp" / (std::string(e.name) + ".maps.json");
      out.push_back(Case{e.name, obj.string(), e.prog, fs::exists(maps) ? maps.string() : "",
                         a.pcap.empty() ? (pcaps / e.pcap).string() : a.pcap});
    }
    if (out.empty()) throw knod::Error(fmt::format("{}: no example objects (*.o)", a.examples));
  }
  for (const std::string& s : a.specs) {
    Case c;
    auto colon = s.rfind(':');
    c.obj = colon == std::string::npos ? s : s.substr(0, colon);
    c.prog = colon == std::string::npos ? a.prog : s.substr(colon + 1);
    if (c.prog.empty()) {
      knod::loader::Object o = knod::loader::load_object(c.obj, {});
      if (o.programs.empty()) throw knod::Error(fmt::format("{}: no programs", c.obj));
      c.prog = o.programs[0].name;
    }
    c.label = fs::path(c.obj).stem().string() + ":" + c.prog;
    c.maps = a.map_load;
    c.pcap = a.pcap;
    if (c.pcap.empty()) throw knod::Error("-r PCAP is required (or use --examples DIR)");
    out.push_back(c);
  }
  if (out.empty()) throw knod::Error("nothing to run: give OBJ[:PROG] or --examples DIR");
  return out;
}

int bench(const BenchArgs& a) {
  const bool interp = a.device.find("interp") != std::string::npos;
  const bool cpu = a.device.find("cpu") != std::string::npos;
  const uint32_t workers =
      a.workers ? a.workers : std::max(1u, std::thread::hardware_concurrency());
  std::string why;
  bool kernel = a.vs_kernel;
  if (kernel && !knod::kernel::Object::available(&why)) {
    fmt::print(stderr, "knod: --vs-kernel: {}; kernel column skipped\n", why);
    kernel = false;
  }
  if (kernel && a.reset)
    fmt::print(stderr,
               "knod: --reset: the kernel accumulates across repeats, knod does not; "
               "the kernel/knod ratio compares different work\n");
  // kern-N: one thread per CPU, at most as many as the bench may run on (one CPU's threads
  // would share it, and the kernel's timer leaves out the time each waits).
  const uint32_t kernel_cpus =
      std::min<uint32_t>(workers, std::max<size_t>(1, knod::device::allowed_cpus().size()));
  // The ceiling: jit-1 also on jit-N's other workers' CPUs (CpuOptions::pin: the mask's CPUs
  // from one_cpu() on), one at a time, in the same rounds. Summed as packets per ns, over
  // jit-1's, it is the N/1 those CPUs give with no hand-off and no line two of them write: on a
  // VM whose vCPUs run at different speeds, below N. Only with a CPU per worker.
  std::vector<int> ceiling_cpus;
  if (cpu && workers > 1 && workers <= knod::device::allowed_cpus().size()) {
    std::vector<int> ids = knod::device::allowed_cpus();
    const auto here = std::find(ids.begin(), ids.end(), one_cpu());
    if (here != ids.end()) std::rotate(ids.begin(), here, ids.end());
    ceiling_cpus.assign(ids.begin() + 1, ids.begin() + workers);
  }
  std::vector<Case> cs = cases(a);
  // One space before every column, so that a cell wider than its column (ns in the millions)
  // never runs into the next.
  constexpr auto kRow =
      "{:<24} {:>5} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} "
      "{:>8} {:>7}\n";
  double log_kern = 0, log_int = 0, log_scale = 0, log_kscale = 0, log_ceil = 0, max_compile = 0,
         max_compile_cpu = 0;
  std::string max_compile_label;  // the program of max_compile (and of max_compile_cpu)
  Result hand;                    // jit-N's hand-off counts, all rows
  int n_kern = 0, n_int = 0, n_scale = 0, n_kscale = 0, n_ceil = 0;
  // Every row's columns (the kernel's too) exist at once and take turns round by round, rows
  // included (round k of every column of every row, then round k + 1): a row's rounds are
  // spread over the whole run, so a slow stretch of the host (tens of ms on a shared VM)
  // costs one of its rounds rather than all of them. Memory: 3 batches of 4 KiB frames and
  // one kernel object per row.
  struct Row {
    std::optional<Column> ci, c1, cn;
    std::deque<Column> alone;             // jit-1 on ceiling_cpus, one each
    std::optional<KernelColumn> ck, ckn;  // the kernel on 1 CPU, on kernel_cpus at once
  };
  std::deque<Row> rows;
  // Compile times first, before the columns hold their memory (Column::compile_time).
  for (const Case& c : cs) {
    if (!cpu) break;
    auto [wall, cpu_ms] = Column::compile_time(c, workers);
    if (max_compile_label.empty() || wall > max_compile)
      max_compile = wall, max_compile_cpu = cpu_ms, max_compile_label = c.label;
  }
  for (const Case& c : cs) {
    Row& r = rows.emplace_back();
    if (interp) r.ci.emplace(c, "interp", 1, a);
    if (cpu) r.c1.emplace(c, "cpu", 1, a), r.cn.emplace(c, "cpu", workers, a);
    for (int at : ceiling_cpus) r.alone.emplace_back(c, "cpu", 1, a, at);
    if (kernel) r.ck.emplace(c, a);
    if (kernel && kernel_cpus > 1) r.ckn.emplace(c, a, kernel_cpus);
  }
  // Packets left out of a row's capture, as knod run says them (one stderr line per capture).
  for (size_t i = 0; i < cs.size(); ++i) {
    const Row& r = rows[i];
    const Packets* pk = r.c1   ? &r.c1->packets()
                        : r.ci ? &r.ci->packets()
                        : r.ck ? &r.ck->packets()
                               : nullptr;
    if (const std::string note = pk ? pk->skipped_note() : ""; !note.empty())
      fmt::print(stderr, "knod: warning: {}: packets skipped: {}\n", cs[i].pcap, note);
    if (pk && !pk->cut.empty()) fmt::print(stderr, "knod: warning: {}\n", pk->cut);
  }
  fmt::print("repeat {} (best of {} rounds), knod batch >= {} packets, {}{}\n", a.repeat, a.rounds,
             a.min_batch,
             cpu ? fmt::format("{} worker{} for jit-N, ", workers, workers == 1 ? "" : "s") : "",
             a.reset ? "packets reset before each repeat" : "changes accumulate across repeats");
  fmt::print(kRow, "program", "pkts", "interp", "jit-1", "jit-N", "kernel", "Mpps-i", "Mpps-1",
             "Mpps-N", "Mpps-k", "jit/kern", "jit/int", "N/1", "ceil", "kern-N", "kN/1");
  fmt::print(kRow, "", "", "ns/pkt", "ns/pkt", "ns/pkt", "ns/pkt", "", "", "", "", "", "speedup",
             "scaling", "N/1", "ns/pkt", "kernel");
  std::optional<HostLoop> host;
  if (cpu && workers > 1) host.emplace(workers);
  for (uint32_t k = 0; k < a.rounds; ++k) {
    if (host) host->round();
    for (Row& r : rows) {
      for (std::optional<Column>* col : {&r.ci, &r.c1, &r.cn})
        if (*col) (*col)->round();
      for (Column& col : r.alone) col.round();
      if (r.ck) r.ck->round();
      if (r.ckn) r.ckn->round();
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const Case& c = cs[i];
    Result ri, r1, rn, rk, rkn;
    if (rows[i].ci) ri = rows[i].ci->result();
    if (rows[i].c1) r1 = rows[i].c1->result(), rn = rows[i].cn->result();
    if (rows[i].ck) rk = rows[i].ck->result();
    if (rows[i].ckn) rkn = rows[i].ckn->result();
    const double jk = r1.ns / rk.ns, ji = ri.ns / r1.ns, sc = r1.ns / rn.ns, ks = rk.ns / rkn.ns;
    double ceil = rows[i].alone.empty() ? NAN : 1.0;  // jit-1's CPU, then each other's share
    for (const Column& col : rows[i].alone) ceil += r1.ns / col.result().ns;
    if (std::isfinite(jk) && jk > 0) log_kern += std::log(jk), ++n_kern;
    if (std::isfinite(ji) && ji > 0) log_int += std::log(ji), ++n_int;
    if (std::isfinite(sc) && sc > 0) log_scale += std::log(sc), ++n_scale;
    if (std::isfinite(ks) && ks > 0) log_kscale += std::log(ks), ++n_kscale;
    if (std::isfinite(ceil) && ceil > 0) log_ceil += std::log(ceil), ++n_ceil;
    fmt::print(kRow, c.label, std::max({ri.packets, r1.packets, rk.packets}), cell(ri.ns),
               cell(r1.ns), cell(rn.ns), cell(rk.ns), cell(mpps(ri.ns), "{:.2f}"),
               cell(mpps(r1.ns), "{:.2f}"), cell(mpps(rn.ns), "{:.2f}"),
               cell(mpps(rk.ns), "{:.2f}"), cell(jk, "{:.2f}x"), cell(ji, "{:.1f}x"),
               cell(sc, "{:.2f}x"), cell(ceil, "{:.2f}x"), cell(rkn.ns), cell(ks, "{:.2f}x"));
    std::fflush(stdout);
    hand.runs += rn.runs, hand.batches += rn.batches, hand.late += rn.late,
        hand.stalls += rn.stalls;
    hand.items += rn.items, hand.caller_items += rn.caller_items;
  }
  if (cpu)
    fmt::print(
        "max JIT compile: {:.1f} ms/program ({}, {:.1f} ms CPU; each the faster of 2 compiles)\n",
        max_compile, max_compile_label, max_compile_cpu);
  if (hand.runs)
    fmt::print(
        "jit-N hand-off: in {} jobs of {} batches the caller ran {} slices of late workers and {} "
        "of "
        "stalled ones; worker 0 ran {:.1f}% of the batches\n",
        hand.runs, hand.batches, hand.late, hand.stalls,
        100.0 * double(hand.caller_items) / double(hand.items));
  if (cs.size() > 1) {
    if (n_int) fmt::print("geomean interp/jit-1 speedup: {:.2f}\n", std::exp(log_int / n_int));
    if (n_scale) {
      fmt::print("geomean jit-N/jit-1 scaling: {:.2f}", std::exp(log_scale / n_scale));
      if (host)
        fmt::print(
            " (host, same rounds, {} workers: a dependent chain scales {:.2f}, 8 independent "
            "chains {:.2f}; an empty batch takes {:.0f} ns)",
            workers, host->scaling(false), host->scaling(true), host->handoff_ns());
      fmt::print("\n");
    }
    if (n_ceil)
      fmt::print(
          "geomean ceiling N/1: {:.2f} (jit-1 on each of the {} workers' CPUs alone, same rounds, "
          "summed: jit-N/jit-1 with no hand-off and no shared line)\n",
          std::exp(log_ceil / n_ceil), workers);
    if (n_kscale)
      fmt::print("geomean kernel-N/kernel-1 scaling: {:.2f} (the kernel's JIT, {} CPUs at once)\n",
                 std::exp(log_kscale / n_kscale), kernel_cpus);
    if (n_kern) fmt::print("geomean knod-jit/kernel: {:.3f}\n", std::exp(log_kern / n_kern));
  }
  return 0;
}

}  // namespace

KNOD_COMMAND(bench) {
  auto a = std::make_shared<BenchArgs>();
  auto* c = app.add_subcommand(
      "bench",
      "ns/packet and Mpps: interpreter, CPU JIT on 1 and N threads, kernel JIT on 1 and N CPUs");
  c->add_option("object", a->specs, "eBPF ELF object(s), OBJ or OBJ:PROG");
  c->add_option("-p,--prog", a->prog, "program name or section for OBJ (default: the first)");
  c->add_option("-r,--read", a->pcap, "capture to run (with --examples: for every example)");
  c->add_option("--map-load", a->map_load, "preload maps (FILE.json, examples/xdp/README.md)");
  c->add_option("--examples", a->examples,
                "directory of the built examples (<build>/examples/xdp): runs each with its "
                ".maps.json and capture");
  c->add_option("--pcap-dir", a->pcap_dir, "captures for --examples (default: examples/pcap)");
  c->add_option("--device", a->device, "columns: interp, cpu, or interp,cpu (default)");
  c->add_option("--workers", a->workers,
                "threads for jit-N and, with --xfrm, knod-N (default: all cores)")
      ->check(CLI::Range(1u, 1024u));
  c->add_option("--repeat", a->repeat, "runs of every packet (kernel: test_run repeat)")
      ->check(CLI::Range(1u, 1u << 24));
  c->add_option("--rounds", a->rounds,
                "run every column this many times (--repeat runs each, knod's columns taking "
                "turns; kernel: one test_run each) and keep the fastest round; default 3")
      ->check(CLI::Range(1u, 1000u));
  c->add_option("--max-packets", a->max_packets, "packets taken from each capture")
      ->check(CLI::Range(1u, 1u << 20));
  c->add_option("--min-batch", a->min_batch,
                "knod batch size: the capture is repeated to at least this many packets")
      ->check(CLI::Range(1u, 1u << 20));
  c->add_flag("--vs-kernel", a->vs_kernel,
              "also run the kernel's JIT (BPF_PROG_TEST_RUN) on 1 CPU and, with several "
              "--workers, on that many CPUs at once (kern-N)");
  c->add_flag("--reset", a->reset, "restore every packet before each knod repeat");
  auto x = knod::cli::add_xfrm_bench_options(c);  // --xfrm FILE: ESP, cmd_bench_xfrm.cpp
  c->callback([a, x, set_action] {
    // A command line error (exit 2, README), found before anything is loaded.
    if (x->file.empty() && a->examples.empty() && a->specs.empty())
      throw CLI::ValidationError("nothing to run: give OBJ[:PROG] -r PCAP or --examples DIR");
    if (x->file.empty() && a->examples.empty() && a->pcap.empty())
      throw CLI::ValidationError("-r PCAP is required (or use --examples DIR)");
    if (!x->file.empty() && (!a->specs.empty() || !a->examples.empty() || !a->pcap.empty()))
      throw CLI::ValidationError(
          "--xfrm benches ESP SAs alone: OBJ, --examples and -r are for XDP programs (run one "
          "bench, then the other)");
    // interp, cpu or both, each once (helper-53: "interp," and "cpu,cpu" passed).
    std::vector<std::string> seen;
    for (size_t at = 0, comma = 0; comma != std::string::npos; at = comma + 1) {
      comma = a->device.find(',', at);
      const std::string d = a->device.substr(at, comma == std::string::npos ? comma : comma - at);
      if ((d != "interp" && d != "cpu") || std::count(seen.begin(), seen.end(), d))
        throw CLI::ValidationError(
            fmt::format("--device {}: use interp, cpu or both (interp,cpu)", a->device));
      seen.push_back(d);
    }
    set_action([a, x] { return x->file.empty() ? bench(*a) : knod::cli::run_xfrm_bench(*x); });
  });
}
