// xdp::Runtime: env construction and the per-packet run (net/bpf/test_run.c
// bpf_prog_test_run_xdp, include/net/xdp.h xdp_init_buff / xdp_prepare_buff).
#include "xdp/runtime.h"

#include <fmt/core.h>

#include <atomic>
#include <exception>

#include "base/error.h"
#include "maps/perf_event_array.h"
#include "maps/ringbuf.h"
#include "vm/prepare.h"
#include "xdp/buff.h"
#include "xdp/helpers.h"

namespace knod::xdp {

const char* action_name(uint32_t action) {
  switch (action) {
    case XDP_ABORTED:
      return "XDP_ABORTED";
    case XDP_DROP:
      return "XDP_DROP";
    case XDP_PASS:
      return "XDP_PASS";
    case XDP_TX:
      return "XDP_TX";
    case XDP_REDIRECT:
      return "XDP_REDIRECT";
    default:
      return "XDP_UNKNOWN";
  }
}

namespace {
const loader::ProgramSpec* find(const loader::Object& obj, const std::string& name, size_t* idx) {
  for (size_t pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < obj.programs.size(); ++i)
      if ((pass == 0 ? obj.programs[i].name : obj.programs[i].section) == name) {
        *idx = i;
        return &obj.programs[i];
      }
  return nullptr;
}

/// Runtime::order_free's test on the entry's instructions.
bool packet_only(const InsnVec& insns) {
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    const Insn& i = insns[pc];
    if (i.code == (BPF_LD | BPF_IMM | BPF_DW)) {
      if (i.src_reg != 0) return false;  // a map, map value or function address
      ++pc;
      continue;
    }
    if (i.code != (BPF_JMP | BPF_CALL) || i.src_reg == BPF_PSEUDO_CALL) continue;
    if (i.src_reg != 0) return false;  // a kfunc
    switch (i.imm) {
      case BPF_FUNC_xdp_adjust_head:
      case BPF_FUNC_xdp_adjust_meta:
      case BPF_FUNC_xdp_adjust_tail:
      case BPF_FUNC_xdp_load_bytes:
      case BPF_FUNC_xdp_store_bytes:
      case BPF_FUNC_xdp_get_buff_len:
      case BPF_FUNC_csum_diff:
        break;
      default:
        return false;
    }
  }
  return true;
}
}  // namespace

Runtime::Runtime(const loader::Object& obj, const std::string& prog, Options opts)
    : opts_(std::move(opts)) {
  if (opts_.ncpus == 0) opts_.ncpus = 1;
  const loader::ProgramSpec* spec = find(obj, prog, &entry_);
  if (!spec) {
    std::string names;
    for (const auto& p : obj.programs) names += (names.empty() ? "" : ", ") + p.name;
    throw Error(fmt::format("no program '{}' in {} (programs: {})", prog, obj.path,
                            names.empty() ? "none" : names));
  }
  // libbpf types a program by its section; one it knows to be of another type (tc, socket
  // filters...) would read its ctx as xdp_md. Unknown sections (type 0) load as XDP.
  if (spec->prog_type != BPF_PROG_TYPE_XDP && spec->prog_type != BPF_PROG_TYPE_UNSPEC)
    throw Error(
        fmt::format("{}: program '{}' is in section '{}', not an XDP program (type {}): knod "
                    "runs XDP programs (SEC(\"xdp\"), \"xdp/...\", \"xdp.frags\")",
                    obj.path, spec->name, spec->section, spec->prog_type));
  env_.maps = obj.maps;
  env_.helpers = &helpers();
  env_.gpl_compatible = obj.gpl_compatible();
  env_.clock_ns = opts_.clock_ns;
  env_.seed = opts_.seed;
  env_.user = this;
  vm::add_value_regions(env_);
  // Every program of the object, so PROG_ARRAY slot values (object program indices) resolve.
  // A program that is not XDP-compatible (other helpers) only fails if it is the entry.
  for (size_t i = 0; i < obj.programs.size(); ++i) {
    try {
      programs_.push_back(std::make_unique<vm::Program>(
          vm::prepare(obj.programs[i].name, obj.programs[i].insns, env_)));
    } catch (const Error& e) {
      if (i == entry_)
        throw Error(fmt::format("{}: program '{}': {}", obj.path, spec->name, e.what()));
      programs_.push_back(nullptr);
    }
  }
  for (const auto& p : programs_) env_.programs.push_back(p.get());
  order_free_ = packet_only(programs_[entry_]->insns);
  cpus_ = std::make_unique<PerCpu[]>(opts_.ncpus);
  for (uint32_t c = 0; c < opts_.ncpus; ++c)
    cpus_[c].prng = opts_.seed * 0x9e3779b97f4a7c15ull + c * 0xbf58476d1ce4e5b9ull + 1;
}

uint64_t Runtime::verdict_count(uint32_t action) const {
  uint64_t n = 0;
  for (uint32_t c = 0; c < opts_.ncpus; ++c) n += cpus_[c].verdicts[action].load();
  return n;
}

uint64_t Runtime::fault_count(vm::Fault f) const {
  if (f == vm::Fault::kNone) {  // not counted per packet: every packet minus the faulted ones
    uint64_t all = 0;
    for (uint32_t a = 0; a < kNumActions; ++a) all += verdict_count(a);
    for (uint32_t k = 1; k < kNumFaults; ++k) all -= fault_count(vm::Fault(k));
    return all;
  }
  uint64_t n = 0;
  for (uint32_t c = 0; c < opts_.ncpus; ++c) n += cpus_[c].faults[uint32_t(f)].load();
  return n;
}

namespace {
void bump(std::atomic<uint64_t>& c) {  // single writer (the cpu's worker)
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
}  // namespace

Runtime::~Runtime() = default;

// kFull: the batch has every optional array (meta_len, ingress_ifindex, rx_queue_index,
// redirect, fault; device::BatchStore's batches do), so no per-packet null tests.
template <bool kFull>
[[gnu::always_inline]] inline RunResult Runtime::finish(device::Batch& batch, uint32_t i,
                                                        uint32_t cpu, RunResult res, const Buff* b,
                                                        bool drain) {
  if (!b) res.fault = vm::Fault::kOutOfBounds;  // not run: impossible layout or bad cpu
  if (res.fault == vm::Fault::kNone) {
    res.verdict = res.retval <= XDP_REDIRECT ? res.retval : uint32_t(XDP_ABORTED);
    if (res.verdict == XDP_REDIRECT) res.redirect = b->redirect;
    batch.data_off[i] = uint32_t(b->data - b->data_hard_start);
    batch.data_len[i] = b->len();
    if (kFull || batch.meta_len) batch.meta_len[i] = b->meta_len();
  } else {
    res.verdict = XDP_ABORTED;
  }
  batch.verdict[i] = res.verdict;
  if (kFull || batch.redirect) batch.redirect[i] = res.redirect;
  if (kFull || batch.fault) batch.fault[i] = uint8_t(res.fault);
  if (cpu < opts_.ncpus) {
    bump(cpus_[cpu].verdicts[res.verdict]);
    if (res.fault != vm::Fault::kNone) bump(cpus_[cpu].faults[uint32_t(res.fault)]);
  } else {  // a bad cpu index (aborted above): counted on cpu 0, not the hot path
    cpus_[0].verdicts[res.verdict].fetch_add(1);
    cpus_[0].faults[uint32_t(res.fault)].fetch_add(1);
  }
  if (drain) drain_outputs();
  return res;
}

// Inlined into both callers (a RunResult copied through memory stalls store forwarding).
template <bool kFull>
[[gnu::always_inline]] inline RunResult Runtime::run_slot(PerCpu& pc, vm::Executor& ex,
                                                          device::Batch& batch, uint32_t i,
                                                          uint32_t cpu, bool drain) {
  RunResult res;
  const uint32_t off = batch.data_off[i], len = batch.data_len[i];
  const uint32_t meta = kFull || batch.meta_len ? batch.meta_len[i] : 0;
  // test_run refuses frames under ETH_HLEN (bpf_test_init: -EINVAL); so does knod.
  const uint32_t frame = device::frame_size(batch);
  const bool layout_ok = frame > device::kTailroom && meta <= off && len >= kEthHlen &&
                         uint64_t(off) + len <= frame - device::kTailroom;
  if (!layout_ok) return finish<kFull>(batch, i, cpu, res, nullptr, drain);
  // The cpu's Run and Buff are reused: every field a run may change is reset here (no
  // per-packet zeroing of the whole Run, whose region table is most of it); prime() set the
  // rest.
  Buff& b = pc.buff;
  b.init(batch.frames + size_t(i) * batch.stride, frame, off, len, meta);
  b.ingress_ifindex = kFull || batch.ingress_ifindex ? batch.ingress_ifindex[i] : kLoopbackIfindex;
  b.rx_queue_index = kFull || batch.rx_queue_index ? batch.rx_queue_index[i] : 0;
  b.egress_ifindex = 0;
  b.redirect = 0;
  b.held_lock = 0;
  vm::Run& run = pc.run;
  run.insns_executed = 0;
  run.nregions = pc.nregions;  // the packet (region 0, b.packet_region), the JIT's stack
  b.sync(run);
  run.tail_calls = 0;
  run.tail_target = nullptr;
  run.fault = vm::Fault::kNone;
  run.fault_pc = 0;
  run.exit_now = false;
  run.prng = pc.prng;
  run.clock_ns = batch.clock_ns ? batch.clock_ns[i] : 0;
  uint64_t r0;
  if (pc.entry)  // the executor's native entry, hooks set by prime()
    r0 = pc.entry(&run, run.ctx_lo, 0);
  else if (pc.bound)
    r0 = ex.run_bound(run, *programs_[entry_], pc.bound, run.ctx_lo, 0);
  else
    r0 = ex.run(run, *programs_[entry_], run.ctx_lo, 0);
  pc.prng = run.prng;
  if (b.held_lock)  // only after a fault: the verifier forces the unlock
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(b.held_lock)).store(0);
  res.fault = run.fault;
  res.fault_pc = run.fault_pc;
  if (res.fault == vm::Fault::kNone) res.retval = uint32_t(r0);
  return finish<kFull>(batch, i, cpu, res, &b, drain);
}

template <bool kFull>
void Runtime::run_range(PerCpu& pc, vm::Executor& ex, device::Batch& batch, uint32_t begin,
                        uint32_t end, uint32_t cpu, bool drain) {
  for (uint32_t i = begin; i < end; ++i) {
    if (i + 1 < end) {  // the next packet's headers load while this one runs (VPP-style)
      const uint8_t* next = batch.frames + size_t(i + 1) * batch.stride + batch.data_off[i + 1];
      __builtin_prefetch(next, 1);
      __builtin_prefetch(next + 64, 1);
    }
    run_slot<kFull>(pc, ex, batch, i, cpu, drain);
  }
}

void Runtime::run_native(PerCpu& pc, const device::Batch& in, uint32_t begin, uint32_t end,
                         bool backward, bool drain, bool ahead) {
  vm::Run& run = pc.run;
  Buff& b = pc.buff;
  // The body on the kept stack, as the entry would call it (vm::Executor::BodyFn): prime()
  // registered [fp - kStackSize, fp) as run.stack_region, and every call restores that low end.
  SlotLoop s;
  s.run = &run;
  s.buff = &b;
  s.batch = &in;
  s.fp = run.stack + size_t(kStackSize) * kMaxCallDepth;
  s.pkt = &run.regions[b.packet_region];  // writable, flat: attach() set it
  s.ctx = run.ctx_lo;
  s.room = uint64_t(device::frame_size(in)) - device::kTailroom;  // > 0 (the caller's test)
  s.begin = begin;
  s.end = end;
  s.region = run.stack_region;
  s.nregions = pc.nregions;  // the packet, the stack
  s.backward = backward;
  s.ahead = ahead && (backward ? begin > 0 : end < in.count);
  // The sinks are the caller's code and may throw; the compiled loop cannot unwind (its
  // bitcode is built without exceptions), so the first exception waits for the loop's end.
  struct Drain {
    Runtime* rt;
    std::exception_ptr error;
  } drainer{this, nullptr};
  if (drain) {
    s.after = [](void* arg) {
      auto* d = static_cast<Drain*>(arg);
      try {
        d->rt->drain_outputs();
      } catch (...) {
        if (!d->error) d->error = std::current_exception();
      }
    };
    s.after_arg = &drainer;
  }
  b.frame_sz = device::frame_size(in);
  b.egress_ifindex = 0;
  b.held_lock = 0;
  run.tail_target = nullptr;
  run.fault = vm::Fault::kNone;
  run.fault_pc = 0;
  run.exit_now = false;
  run.prng = pc.prng;
  if (!in.clock_ns) run.clock_ns = 0;
  if (pc.slots) {
    pc.slots(&s);  // the same loop, compiled with the body inlined
  } else {
    run_slot_loop(s, pc.body);
  }
  pc.prng = run.prng;
  // Counted by the loop and added here, verdicts before faults (fault_count(kNone) subtracts
  // the faults from the verdicts).
  const auto add = [](std::atomic<uint64_t>& c, uint64_t n) {  // single writer, as bump()
    if (n) c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  for (uint32_t a = 0; a < kNumActions; ++a) add(pc.verdicts[a], s.counts[a]);
  for (uint32_t k = 1; k < kNumFaults; ++k) add(pc.faults[k], s.faults[k]);
  if (drainer.error) std::rethrow_exception(drainer.error);
}

void Runtime::run_packets(vm::Executor& ex, device::Batch& batch, uint32_t begin, uint32_t end,
                          uint32_t cpu, bool backward, bool ahead) {
  const bool drain = opts_.perf || opts_.ringbuf;
  if (cpu >= opts_.ncpus) {  // a bad worker index: every slot aborted, counted on cpu 0
    for (uint32_t i = begin; i < end; ++i)
      finish<false>(batch, i, cpu, RunResult{}, nullptr, drain);
    return;
  }
  PerCpu& pc = prime(ex, cpu);
  const bool full = batch.meta_len && batch.ingress_ifindex && batch.rx_queue_index &&
                    batch.redirect && batch.fault;
  if (full && pc.body && device::frame_size(batch) > device::kTailroom &&
      pc.buff.packet_region >= 0) {
    run_native(pc, batch, begin, end, backward && !drain, drain, ahead);  // records in order
  } else if (full)  // forward only: an interpreter, a program without a native body
    run_range<true>(pc, ex, batch, begin, end, cpu, drain);
  else
    run_range<false>(pc, ex, batch, begin, end, cpu, drain);
}

RunResult Runtime::run_packet(vm::Executor& ex, device::Batch& batch, uint32_t i, uint32_t cpu) {
  const bool drain = opts_.perf || opts_.ringbuf;
  if (cpu >= opts_.ncpus) return finish<false>(batch, i, cpu, RunResult{}, nullptr, drain);
  return run_slot<false>(prime(ex, cpu), ex, batch, i, cpu, drain);
}

// What is the same for every packet a worker runs: the Run's env, cpu, budget and ctx hooks
// (Buff::attach), the executor binding. Runs change none of it (tail calls and callbacks
// restore what they set).
Runtime::PerCpu& Runtime::prime(vm::Executor& ex, uint32_t cpu) {
  PerCpu& pc = cpus_[cpu];
  vm::Run& run = pc.run;
  run.env = &env_;
  run.cpu = cpu;
  run.insn_budget = opts_.insn_budget;
  run.call_func = nullptr;
  run.executor = nullptr;
  run.nregions = 0;
  pc.buff.attach(run);  // ctx range and accessors, prog_state; the packet is region 0
  if (pc.ex != &ex || pc.ex_serial != ex.serial()) {  // bind once per (cpu, executor)
    pc.bound = ex.bind(*programs_[entry_], &env_);
    pc.ex = &ex;
    pc.ex_serial = ex.serial();
  }
  pc.entry = pc.bound ? ex.direct(run, pc.bound) : nullptr;  // sets the run's executor hooks
  run.stack = nullptr;
  run.stack_region = -1;
  if (pc.entry) {  // the JIT's frames live in pc.stack, one region for every packet
    constexpr size_t kBytes = size_t(kStackSize) * kMaxCallDepth;
    if (!pc.stack) pc.stack = std::make_unique<uint8_t[]>(kBytes);
    const auto top = reinterpret_cast<uint64_t>(pc.stack.get()) + kBytes;
    run.stack_region = run.add_region(top - kStackSize, top, true);
    if (run.stack_region >= 0) run.stack = pc.stack.get();
  }
  pc.body = pc.entry && run.stack ? ex.direct_body(pc.bound) : nullptr;
  pc.slots = pc.body ? ex.direct_slots(pc.bound) : nullptr;
  pc.nregions = run.nregions;
  return pc;
}

void Runtime::emit_trace(uint32_t cpu, std::string_view msg) {
  if (!opts_.trace) return;
  std::lock_guard lock(sink_mu_);
  opts_.trace(cpu, msg);
}

void Runtime::drain_outputs() {
  std::lock_guard lock(sink_mu_);
  for (const auto& m : env_.maps) {
    if (opts_.perf)
      if (auto* pe = dynamic_cast<maps::PerfEventArray*>(m.get()))
        pe->drain([&](uint32_t slot, const uint8_t* d, uint32_t n) { opts_.perf(*m, slot, d, n); });
    if (opts_.ringbuf)
      if (auto* rb = dynamic_cast<maps::RingBuf*>(m.get()))
        rb->drain([&](const uint8_t* d, uint32_t n) { opts_.ringbuf(*m, d, n); });
  }
}

}  // namespace knod::xdp
