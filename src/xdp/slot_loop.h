// The per-packet loop of a native XDP body over a run of batch slots: one definition, used by
// xdp::Runtime (calling the body through its pointer) and by the JIT runtime bitcode
// (jit/runtime/rt.cpp knod_rt_xdp_slots), where it is linked into the program's module and
// the body inlined into it, so that the loop's state stays in registers across the program.
// Semantics: BPF_PROG_TEST_RUN's per packet (net/bpf/test_run.c), as Runtime::run_packet.
#pragma once

#include <linux/bpf.h>

#include <atomic>
#include <cstdint>

#include "device/batch.h"
#include "vm/abi.h"
#include "xdp/buff.h"

namespace knod::xdp {

constexpr uint32_t kNumActions = 5;  ///< XDP_ABORTED..XDP_REDIRECT
constexpr uint32_t kNumFaults = 7;   ///< vm::Fault values (kNone..kCtxAccess)

/// One worker's run of slots [begin, end) of `batch`: what Runtime::run_packets sets up once
/// (the worker's Run and Buff, attached; its kept stack) and the counts the loop returns.
struct SlotLoop {
  vm::Run* run = nullptr;
  Buff* buff = nullptr;                  ///< attached to *run; frame_sz = frame_size(*batch)
  const device::Batch* batch = nullptr;  ///< every optional array present but clock_ns
  uint8_t* fp = nullptr;                 ///< top of the kept stack's first frame
  vm::Region* pkt = nullptr;             ///< run->regions[buff->packet_region]
  uint64_t ctx = 0;                      ///< run->ctx_lo
  uint64_t room = 0;                     ///< frame_size(*batch) - device::kTailroom (bytes)
  uint32_t begin = 0, end = 0;
  int32_t region = 0;     ///< the kept stack's Region index
  uint32_t nregions = 0;  ///< regions every packet starts with (the packet, the stack)
  bool backward = false;  ///< slots end - 1 down to begin (cache placement; order_free only)
  /// The slot after the last (in walking order) exists and is this worker's next: the last
  /// slot prefetches it too (Runtime::run_packets' `ahead`).
  bool ahead = false;
  /// Called after every slot when set, with `after_arg` (Runtime::drain_outputs: perf and
  /// ring buffer records go to their sinks packet by packet).
  void (*after)(void* arg) = nullptr;
  void* after_arg = nullptr;
  /// Out: packets per verdict (index enum xdp_action) and per fault (vm::Fault), written by
  /// the loop. No initialiser: zeroing the whole struct for every claim took a `rep stos`,
  /// ~24% of Runtime::run_native's own time with 1-packet claims (session 20).
  uint64_t counts[kNumActions];
  uint64_t faults[kNumFaults];
};

/// Runs body(run, fp, r1 = ctx, r2..r5 = 0, depth 1, region) -> r0 (vm::Executor::BodyFn's
/// arguments: the kept stack's frame as Region `region`) on every slot of `s`, writing each slot's
/// outputs; run.clock_ns is the slot's batch.clock_ns when the batch has them (else left). A slot
/// whose layout is impossible (meta before the frame, < ETH_HLEN, past the tailroom) is aborted
/// with kOutOfBounds unrun. After a fault, exit_now, a held lock or a pending tail target the run's
/// state is reset here.
template <class Body>
inline __attribute__((always_inline)) void run_slot_loop(SlotLoop& s, Body&& body) {
  // Copies: the body's stores cannot alias locals, so they stay in registers across it.
  const device::Batch bt = *s.batch;
  vm::Run& run = *s.run;
  Buff& b = *s.buff;
  vm::Region& pkt = *s.pkt;
  uint8_t* const fp = s.fp;
  const uint64_t ctx = s.ctx, room = s.room;
  const uint32_t begin = s.begin, end = s.end, nregions = s.nregions;
  const int32_t region = s.region;
  const bool backward = s.backward, ahead = s.ahead;
  uint64_t counts[kNumActions] = {}, faults[kNumFaults] = {};
  // Slot i walks by di (+1, or -1 backward: Runtime::order_free programs), its frame by step.
  const uint32_t di = backward ? ~0u : 1u;
  const ptrdiff_t step = backward ? -ptrdiff_t(bt.stride) : ptrdiff_t(bt.stride);
  uint32_t i = backward ? end - 1 : begin;
  uint8_t* frame = bt.frames + size_t(i) * bt.stride;
  void (*const after)(void*) = s.after;
  for (uint32_t left = end > begin ? end - begin : 0; left; --left, i += di, frame += step) {
    // The next packet's headers load while this one runs (VPP-style), where a NIC puts them
    // (XDP_PACKET_HEADROOM). Past the claim's last slot only when that is this worker's next
    // (`ahead`): else the frame there may be the first of another worker's slice, and a
    // prefetch for writing would take its lines from that worker (icmp_echo on 2 workers
    // walking up: 1.49-1.57x one worker with it, 1.61-1.72x without).
    if (left > 1 || ahead) {
      __builtin_prefetch(frame + step + device::kXdpHeadroom, 1);
      __builtin_prefetch(frame + step + device::kXdpHeadroom + 64, 1);
    }
    const uint32_t off = bt.data_off[i], len = bt.data_len[i], meta = bt.meta_len[i];
    vm::Fault fault = vm::Fault::kOutOfBounds;  // an impossible layout does not run
    uint64_t r0 = 0, start = 0;
    if (!(meta > off || len < kEthHlen || uint64_t(off) + len > room)) [[likely]] {
      start = reinterpret_cast<uint64_t>(frame);
      b.data_hard_start = start;
      b.data = start + off;
      b.data_meta = b.data - meta;
      b.data_end = b.data + len;
      b.ingress_ifindex = bt.ingress_ifindex[i];
      b.rx_queue_index = bt.rx_queue_index[i];
      b.redirect = 0;
      pkt.lo = b.data_meta;
      pkt.hi = b.data_end;
      run.nregions = nregions;
      run.insns_executed = 0;
      run.tail_calls = 0;
      if (bt.clock_ns) run.clock_ns = bt.clock_ns[i];
      r0 = body(&run, fp, ctx, 0, 0, 0, 0, 1, region);
      // One test for the four (bitwise: two branches fewer a packet than ||); `fault` is
      // kNone on the common path as a constant, so the compiler goes straight to its outputs.
      const vm::Fault f = run.fault;
      fault = vm::Fault::kNone;
      if ((uint32_t(f) | uint32_t(run.exit_now)) != 0 ||
          (b.held_lock | reinterpret_cast<uintptr_t>(run.tail_target)) != 0) [[unlikely]] {
        fault = f;
        if (b.held_lock)  // only after a fault: the verifier forces the unlock
          std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(b.held_lock)).store(0);
        b.held_lock = 0;
        run.tail_target = nullptr;
        run.fault = vm::Fault::kNone;
        run.fault_pc = 0;
        run.exit_now = false;
        run.regions[region].lo = reinterpret_cast<uint64_t>(fp) - kStackSize;
      }
    }
    if (fault == vm::Fault::kNone) [[likely]] {
      const uint32_t verdict = uint32_t(r0) <= XDP_REDIRECT ? uint32_t(r0) : uint32_t(XDP_ABORTED);
      bt.redirect[i] = verdict == XDP_REDIRECT ? b.redirect : 0;
      bt.data_off[i] = uint32_t(b.data - start);
      bt.data_len[i] = b.len();
      bt.meta_len[i] = b.meta_len();
      bt.verdict[i] = verdict;
      bt.fault[i] = 0;
      ++counts[verdict];
    } else {
      bt.verdict[i] = XDP_ABORTED;  // the slot's outputs for a fault
      bt.redirect[i] = 0;
      bt.fault[i] = uint8_t(fault);
      ++counts[XDP_ABORTED];
      ++faults[uint32_t(fault)];
    }
    if (after) after(s.after_arg);  // this slot's records
  }
  for (uint32_t a = 0; a < kNumActions; ++a) s.counts[a] = counts[a];
  for (uint32_t f = 0; f < kNumFaults; ++f) s.faults[f] = faults[f];
}

}  // namespace knod::xdp
