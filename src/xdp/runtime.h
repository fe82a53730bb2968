// xdp::Runtime: one XDP program of a loaded object, ready to run packets of a device::Batch
// with the kernel's BPF_PROG_TEST_RUN semantics (net/bpf/test_run.c bpf_prog_test_run_xdp).
// It owns the vm::Env (maps, every program of the object for tail calls, helper table, map
// value pools), the output sinks (trace_printk, perf, ring buffer) and the counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "device/batch.h"
#include "loader/object.h"
#include "vm/abi.h"
#include "vm/executor.h"
#include "xdp/buff.h"
#include "xdp/fib.h"
#include "xdp/slot_loop.h"

namespace knod::xdp {

/// bpf_trace_printk output: one formatted message (no trailing newline added), its CPU.
using TraceSink = std::function<void(uint32_t cpu, std::string_view msg)>;
/// bpf_perf_event_output record: map, perf ring index (CPU), record bytes.
using PerfSink =
    std::function<void(const maps::Map& map, uint32_t index, const uint8_t* data, size_t len)>;
/// bpf_ringbuf_output / bpf_ringbuf_submit record: map and sample bytes.
using RingbufSink = std::function<void(const maps::Map& map, const uint8_t* data, size_t len)>;

struct Options {
  uint32_t ncpus = 1;     ///< CPUs (workers) that may call run_packet at the same time
  uint64_t clock_ns = 0;  ///< pinned clock for bpf_ktime_get_*_ns, bpf_jiffies64; 0 = real
  uint64_t seed = 0;      ///< bpf_get_prandom_u32 / syncookie secret seed
  uint64_t insn_budget = vm::kDefaultInsnBudget;  ///< instructions per packet before kInsnBudget
  std::shared_ptr<const FibTable> fib;            ///< bpf_fib_lookup / bpf_check_mtu; null = empty
  TraceSink trace;                                ///< null: bpf_trace_printk formats and drops
  PerfSink perf;        ///< null: records stay in the map (maps::PerfEventArray::drain)
  RingbufSink ringbuf;  ///< null: records stay in the ring, which fills up as in the kernel
};

/// Outcome of one packet.
struct RunResult {
  uint32_t retval = 0;    ///< r0 as BPF_PROG_TEST_RUN reports it (u32), 0 on a fault
  uint32_t verdict = 0;   ///< XDP_ABORTED..XDP_REDIRECT; retval > XDP_REDIRECT or a fault →
                          ///< XDP_ABORTED (bpf_warn_invalid_xdp_action on a real NIC)
  uint64_t redirect = 0;  ///< device::redirect_encode target for XDP_REDIRECT, else 0
  vm::Fault fault = vm::Fault::kNone;
  uint32_t fault_pc = 0;  ///< instruction slot of the fault
};

class Runtime {
 public:
  /// Builds the env for `obj` and selects program `prog` (name or section). Every program of
  /// the object is prepared (vm::prepare) so a PROG_ARRAY value i tail-calls
  /// obj.programs[i]. Throws knod::Error: unknown program, a program that fails to prepare
  /// ("OBJ-PATH: program 'NAME': why").
  Runtime(const loader::Object& obj, const std::string& prog, Options opts);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const vm::Env& env() const { return env_; }
  const vm::Program& program() const { return *programs_[entry_]; }
  const Options& options() const { return opts_; }
  /// Whether the results of a batch do not depend on the order its packets run in: the entry
  /// program calls no helper but those that work on its own packet (bpf_xdp_adjust_head,
  /// _meta, _tail, bpf_xdp_load_bytes, _store_bytes, _get_buff_len, bpf_csum_diff), no
  /// kfunc, and loads no map or function address (ld_imm64 with a src_reg), so a run touches
  /// only its packet, stack and ctx; no tail call can follow. Then a CPU device may walk a
  /// worker's packets in any order (device::CpuOptions::walk_apart); otherwise each worker
  /// runs its packets in batch order, as a CPU takes its receive queue (per-CPU maps,
  /// bpf_get_prandom_u32, a flow's state see them in order).
  bool order_free() const { return order_free_; }
  /// Re-pins the clock of bpf_ktime_get_*_ns / bpf_jiffies64 (0 = real clock) for the next
  /// packets, e.g. to replay the kernel's timestamps. Call between packets, not during runs.
  void set_clock_ns(uint64_t ns) { opts_.clock_ns = env_.clock_ns = ns; }

  /// Runs the program on slot i of `batch` on worker `cpu` (< ncpus). Reads frames,
  /// data_off, data_len, meta_len (if non-null: metadata bytes before data at entry, else 0),
  /// ingress_ifindex (null: 1, loopback), rx_queue_index (null: 0). Writes data_off,
  /// data_len, meta_len, verdict, redirect, fault of slot i. The frame is frame_size(batch)
  /// bytes (frame_sz) at the slot's start; the tailroom device::kTailroom at its end is never given
  /// to the program. A slot whose layout is impossible (packet outside the frame, < ETH_HLEN) is
  /// aborted with Fault::kOutOfBounds without running. Thread-safe for distinct cpus.
  RunResult run_packet(vm::Executor& ex, device::Batch& batch, uint32_t i, uint32_t cpu);
  /// run_packet for slots [begin, end) on worker `cpu`, in order, prefetching each next
  /// packet's first 128 bytes (CpuDevice::run_chunks). Results are in the batch arrays.
  /// `backward`: from end - 1 down to begin on the native path (CpuDevice::backward(cpu),
  /// for cache placement; only where order_free(), else the results may differ). `ahead`:
  /// the slot after the last one (in walking order) is this worker's next (CpuDevice::
  /// continues(cpu)), so the last packet prefetches it too, as every other packet does its
  /// successor (in session 20 no gain stood out from the host's noise; the 10% between
  /// --chunk 64 and one claim a batch was the claims' own cost, see CpuOptions::chunk).
  void run_packets(vm::Executor& ex, device::Batch& batch, uint32_t begin, uint32_t end,
                   uint32_t cpu, bool backward = false, bool ahead = false);

  /// Packets per verdict (index = enum xdp_action) and per fault (index = vm::Fault;
  /// kNone: the packets that did not fault, derived from the others).
  uint64_t verdict_count(uint32_t action) const;
  uint64_t fault_count(vm::Fault f) const;

  // ---- for helpers ------------------------------------------------------------------
  void emit_trace(uint32_t cpu, std::string_view msg);
  /// Drains every PERF_EVENT_ARRAY / RINGBUF map into the perf / ringbuf sinks (done after
  /// each packet when a sink is set).
  void drain_outputs();

 private:
  Options opts_;
  vm::Env env_;
  std::vector<std::unique_ptr<vm::Program>> programs_;
  size_t entry_ = 0;
  bool order_free_ = false;
  /// Per-CPU state, one cache line each (written only by the worker of that cpu, so the
  /// counters are plain relaxed load/store, no shared read-modify-write per packet).
  struct alignas(64) PerCpu {
    uint64_t prng = 0;  ///< bpf_get_prandom_u32 state
    std::array<std::atomic<uint64_t>, kNumActions> verdicts{};
    std::array<std::atomic<uint64_t>, kNumFaults> faults{};
    const vm::Executor* ex = nullptr;  ///< executor of `bound` (with its serial)
    uint64_t ex_serial = 0;
    const void* bound = nullptr;             ///< ex->bind(entry program)
    vm::Executor::DirectFn entry = nullptr;  ///< ex->direct(run, bound), set by prime()
    /// ex->direct_body(bound) when the JIT stack below is kept (run.stack), set by prime():
    /// what run_native calls per packet instead of the entry.
    vm::Executor::BodyFn body = nullptr;
    /// ex->direct_slots(bound) when `body` is set: the JIT's loop with the body inlined
    /// (xdp::SlotLoop), what run_native calls instead of looping over `body` itself.
    vm::Executor::SlotsFn slots = nullptr;
    vm::Run run;  ///< reused by every packet of this cpu (reset per packet)
    Buff buff;
    uint32_t nregions = 1;  ///< regions every run starts with: the packet (+ the stack below)
    /// The JIT entry's stack (vm::Run::stack, kStackSize * kMaxCallDepth bytes, 16-aligned),
    /// allocated and registered by prime() for native entries only.
    std::unique_ptr<uint8_t[]> stack;
  };
  std::unique_ptr<PerCpu[]> cpus_;
  std::mutex sink_mu_;

  PerCpu& prime(vm::Executor& ex, uint32_t cpu);
  /// kFull: every optional array of `batch` is present (no per-packet null tests). `drain`:
  /// opts_.perf or opts_.ringbuf is set.
  template <bool kFull>
  RunResult run_slot(PerCpu& pc, vm::Executor& ex, device::Batch& batch, uint32_t i, uint32_t cpu,
                     bool drain);
  template <bool kFull>
  void run_range(PerCpu& pc, vm::Executor& ex, device::Batch& batch, uint32_t begin, uint32_t end,
                 uint32_t cpu, bool drain);
  /// run_range for the common case: a native body on the kept stack (pc.body), every optional
  /// array of the batch present. Per packet it sets only what a run reads or may change; the
  /// rest (and after a fault, what the fault left) is reset out of line (xdp::run_slot_loop).
  /// `backward`: slots end - 1 down to begin. `drain`: drain_outputs() after every slot.
  /// `ahead`: as run_packets'.
  void run_native(PerCpu& pc, const device::Batch& batch, uint32_t begin, uint32_t end,
                  bool backward, bool drain, bool ahead);
  /// Writes slot i's outputs and counts it; `b` null: the slot did not run (aborted).
  template <bool kFull>
  RunResult finish(device::Batch& batch, uint32_t i, uint32_t cpu, RunResult res, const Buff* b,
                   bool drain);
};

/// The Runtime of a run, or nullptr (helpers run without one in unit tests).
inline Runtime* runtime_of(const vm::Run& run) {
  return run.env ? static_cast<Runtime*>(run.env->user) : nullptr;
}

/// "XDP_PASS" etc.; "XDP_UNKNOWN" for other values.
const char* action_name(uint32_t action);

}  // namespace knod::xdp
