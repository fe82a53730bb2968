// xdp::Runtime::run_packets over a whole device::BatchStore batch: the CPU JIT's native loop
// (Runtime::run_native: every array present, a native entry, the JIT's kept stack; the
// xdp::run_slot_loop compiled with the body inlined, or the same loop in knod calling the
// body, JitOptions::slot_loop) against
// the reference interpreter's per-packet path (run_range), slot by slot, with a fault, an
// impossible layout and a head adjustment in the batch, and the packets after them (what a
// fault leaves in the run must not reach the next packet).
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "base/error.h"
#include "device/cpu/batch_store.h"
#include "insns.h"
#include "jit/executor.h"
#include "loader/object.h"
#include "maps/map.h"
#include "vm/interp.h"
#include "xdp/runtime.h"

namespace knod::xdp {
namespace {

using namespace knod::xdp::test;

// r0 = the packet's first byte (XDP_PASS when shorter than ETH_HLEN); 0xff: a load 3000
// bytes in (outside the 64-byte packet: kOutOfBounds); 0xfe: bpf_xdp_adjust_head(ctx, 4),
// then XDP_PASS.
loader::Object object() {
  loader::Object obj;
  obj.path = "mem";
  obj.programs.push_back({"p", "xdp", BPF_PROG_TYPE_XDP,
                          prog({
                              mov64_reg(6, 1),
                              ldx(BPF_W, 2, 1, 0),
                              ldx(BPF_W, 3, 1, 4),
                              mov64_reg(4, 2),
                              alu64_imm(BPF_ADD, 4, 14),
                              mov64_imm(0, XDP_PASS),
                              jmp_reg(BPF_JGT, 4, 3, 9),
                              ldx(BPF_B, 0, 2, 0),
                              jmp_imm(BPF_JNE, 0, 0xff, 1),
                              ldx(BPF_B, 0, 2, 3000),
                              jmp_imm(BPF_JNE, 0, 0xfe, 5),
                              mov64_reg(1, 6),
                              mov64_imm(2, 4),
                              call(BPF_FUNC_xdp_adjust_head),
                              mov64_imm(0, XDP_PASS),
                              ja(0),
                              exit_insn(),
                          })});
  return obj;
}

constexpr uint8_t kFirst[] = {XDP_PASS, 0xff, 0xfe, XDP_PASS, XDP_TX, 7, XDP_REDIRECT, XDP_DROP};
constexpr uint32_t kSlots = sizeof(kFirst);

void fill(device::BatchStore& s) {
  for (uint32_t i = 0; i < kSlots; ++i) {
    s.b.data_off[i] = device::kXdpHeadroom;
    s.b.data_len[i] = i == 3 ? 10 : 64;  // slot 3: under ETH_HLEN, refused without running
    s.b.ingress_ifindex[i] = 1;
    std::memset(s.slot(i) + device::kXdpHeadroom, 0x5a, 64);
    s.slot(i)[device::kXdpHeadroom] = kFirst[i];
  }
}

class RunPackets : public ::testing::TestWithParam<bool> {};  // JitOptions::slot_loop

jit::JitOptions options(bool slot_loop) {
  jit::JitOptions o;
  o.ctx = jit::CtxKind::kXdp;
  o.slot_loop = slot_loop;
  return o;
}

// The compiled loop exists exactly where it is asked for (XDP programs), so the cases below
// run it (true) and the loop in knod (false).
TEST(SlotLoop, CompiledForXdpProgramsOnly) {
  loader::Object obj = object();
  Runtime rt(obj, "p", {});
  for (bool slot_loop : {true, false}) {
    jit::JitExecutor jit(options(slot_loop));
    EXPECT_EQ(jit.direct_slots(jit.bind(rt.program(), &rt.env())) != nullptr, slot_loop);
  }
  jit::JitExecutor opaque{jit::JitOptions{}};  // CtxKind::kOpaque
  EXPECT_EQ(opaque.direct_slots(opaque.bind(rt.program(), &rt.env())), nullptr);
}

// order_free: only helpers on the program's own packet, no map, so a CPU device may walk a
// worker's packets in any order; anything else runs in batch order. The fixture above
// (bpf_xdp_adjust_head) is order-free, with bpf_xdp_adjust_tail and bpf_csum_diff too; with
// a prandom call or a tail call it is not (nor with a map: tests/cli order.o). A program of
// another type is refused.
TEST(Runtime, OrderFreeOnlyWithoutStateOutsideThePacket) {
  EXPECT_TRUE(Runtime(object(), "p", {}).order_free());
  const auto with = [](std::vector<Insn> head) {
    loader::Object obj = object();
    InsnVec& p = obj.programs[0].insns;
    p.insert(p.begin(), head.begin(), head.end());
    return Runtime(obj, "p", {}).order_free();
  };
  EXPECT_FALSE(with({call(BPF_FUNC_get_prandom_u32)}));
  EXPECT_FALSE(with({call(BPF_FUNC_tail_call)}));
  EXPECT_TRUE(with({call(BPF_FUNC_xdp_adjust_tail), call(BPF_FUNC_csum_diff)}));
  loader::Object bad = object();
  bad.programs[0].prog_type = BPF_PROG_TYPE_SCHED_CLS;
  EXPECT_THROW(Runtime(bad, "p", {}), Error);
}

// Only an entry (bind, or compile asked for it) gets the loop: a tail-call target compiled
// by compile() keeps its fully optimised body and no loop; asking for the loop later
// compiles the program again, and later plain compiles reuse that.
TEST(SlotLoop, OnlyForEntries) {
  loader::Object obj = object();
  Runtime rt(obj, "p", {});
  jit::JitExecutor jit(options(true));
  const jit::CompiledProgram& plain = jit.compile(rt.program(), &rt.env());
  EXPECT_EQ(plain.slots, nullptr);
  const jit::CompiledProgram& entry = jit.compile(rt.program(), &rt.env(), true);
  EXPECT_NE(entry.slots, nullptr);
  EXPECT_NE(&entry, &plain);
  EXPECT_EQ(&jit.compile(rt.program(), &rt.env()), &entry);
  EXPECT_EQ(jit.bind(rt.program(), &rt.env()), &entry);
}

// With the loop, the entry and the standalone body are compiled on their first call
// (jit::split_off_entry): a program bound for batches, then run packet by packet through its
// entry, gives per packet what the loop gave, faults and heads included.
TEST(SlotLoop, EntryCompiledOnFirstCallMatchesTheLoop) {
  loader::Object obj = object();
  jit::JitExecutor jit(options(true));
  Runtime loop(obj, "p", {}), each(obj, "p", {});
  ASSERT_NE(jit.direct_slots(jit.bind(loop.program(), &loop.env())), nullptr);
  device::BatchStore sl(kSlots), se(kSlots);
  fill(sl);
  fill(se);
  loop.run_packets(jit, sl.b, 0, kSlots, 0);
  for (uint32_t i = 0; i < kSlots; ++i) each.run_packet(jit, se.b, i, 0);
  for (uint32_t i = 0; i < kSlots; ++i) {
    EXPECT_EQ(se.b.verdict[i], sl.b.verdict[i]) << "slot " << i;
    EXPECT_EQ(se.b.fault[i], sl.b.fault[i]) << "slot " << i;
    EXPECT_EQ(se.b.data_off[i], sl.b.data_off[i]) << "slot " << i;
    EXPECT_EQ(se.b.data_len[i], sl.b.data_len[i]) << "slot " << i;
  }
  EXPECT_EQ(se.b.verdict[2], uint32_t(XDP_PASS));  // adjust_head(4) ran in the entry too
  EXPECT_EQ(se.b.data_off[2], device::kXdpHeadroom + 4);
  EXPECT_EQ(se.b.fault[1], uint8_t(vm::Fault::kOutOfBounds));
}

TEST_P(RunPackets, NativeLoopMatchesTheInterpreter) {
  loader::Object obj = object();
  jit::JitExecutor jit(options(GetParam()));
  vm::Interpreter interp;
  Runtime rj(obj, "p", {}), ri(obj, "p", {});
  device::BatchStore sj(kSlots), si(kSlots);
  fill(sj);
  fill(si);
  rj.run_packets(jit, sj.b, 0, kSlots, 0);
  ri.run_packets(interp, si.b, 0, kSlots, 0);
  const uint32_t verdict[] = {XDP_PASS, XDP_ABORTED, XDP_PASS,     XDP_ABORTED,
                              XDP_TX,   XDP_ABORTED, XDP_REDIRECT, XDP_DROP};
  const vm::Fault fault[] = {vm::Fault::kNone,        vm::Fault::kOutOfBounds, vm::Fault::kNone,
                             vm::Fault::kOutOfBounds, vm::Fault::kNone,        vm::Fault::kNone,
                             vm::Fault::kNone,        vm::Fault::kNone};
  for (const device::Batch* b : {&sj.b, &si.b}) {
    const char* who = b == &sj.b ? "jit" : "interp";
    for (uint32_t i = 0; i < kSlots; ++i) {
      EXPECT_EQ(b->verdict[i], verdict[i]) << who << " slot " << i;
      EXPECT_EQ(b->fault[i], uint8_t(fault[i])) << who << " slot " << i;
      EXPECT_EQ(b->redirect[i], 0u) << who << " slot " << i;
    }
    EXPECT_EQ(b->data_off[2], device::kXdpHeadroom + 4) << who;  // adjust_head(4)
    EXPECT_EQ(b->data_len[2], 60u) << who;
    EXPECT_EQ(b->data_off[4], device::kXdpHeadroom) << who;
    EXPECT_EQ(b->data_len[4], 64u) << who;
  }
  for (const Runtime* r : {&rj, &ri}) {
    EXPECT_EQ(r->verdict_count(XDP_ABORTED), 3u);
    EXPECT_EQ(r->verdict_count(XDP_PASS), 2u);
    EXPECT_EQ(r->verdict_count(XDP_TX), 1u);
    EXPECT_EQ(r->verdict_count(XDP_REDIRECT), 1u);
    EXPECT_EQ(r->verdict_count(XDP_DROP), 1u);
    EXPECT_EQ(r->fault_count(vm::Fault::kOutOfBounds), 2u);
    EXPECT_EQ(r->fault_count(vm::Fault::kNone), 6u);
  }
  // A second pass over the same slots, as repeats do: slot 2 now starts at a 0x5a byte
  // (r0 = 90: XDP_ABORTED, no fault, the head stays), the others as before.
  rj.run_packets(jit, sj.b, 0, kSlots, 0);
  EXPECT_EQ(sj.b.data_off[2], device::kXdpHeadroom + 4);
  EXPECT_EQ(sj.b.verdict[2], uint32_t(XDP_ABORTED));
  EXPECT_EQ(sj.b.fault[2], 0);
  EXPECT_EQ(sj.b.fault[1], uint8_t(vm::Fault::kOutOfBounds));
  EXPECT_EQ(sj.b.verdict[4], uint32_t(XDP_TX));
  EXPECT_EQ(rj.fault_count(vm::Fault::kOutOfBounds), 4u);
}

// The native loop walking down (CpuDevice::backward's order for worker 0 of several) leaves
// every slot as walking up does: verdicts, faults, heads and counters; the slot run after a
// fault or a refused layout is now the one below it.
TEST_P(RunPackets, BackwardNativeLoopLeavesTheSameSlots) {
  loader::Object obj = object();
  jit::JitExecutor jit(options(GetParam()));
  Runtime up(obj, "p", {}), down(obj, "p", {});
  device::BatchStore su(kSlots), sd(kSlots);
  fill(su);
  fill(sd);
  for (int pass = 0; pass < 2; ++pass) {
    up.run_packets(jit, su.b, 0, kSlots, 0, false);
    down.run_packets(jit, sd.b, 0, kSlots, 0, true);
    for (uint32_t i = 0; i < kSlots; ++i) {
      EXPECT_EQ(sd.b.verdict[i], su.b.verdict[i]) << "pass " << pass << " slot " << i;
      EXPECT_EQ(sd.b.fault[i], su.b.fault[i]) << "pass " << pass << " slot " << i;
      EXPECT_EQ(sd.b.data_off[i], su.b.data_off[i]) << "pass " << pass << " slot " << i;
      EXPECT_EQ(sd.b.data_len[i], su.b.data_len[i]) << "pass " << pass << " slot " << i;
    }
  }
  EXPECT_EQ(sd.b.verdict[1], uint32_t(XDP_ABORTED));  // the fault
  EXPECT_EQ(sd.b.verdict[0], uint32_t(XDP_PASS));     // run after it
  for (uint32_t a = XDP_ABORTED; a <= XDP_REDIRECT; ++a)
    EXPECT_EQ(down.verdict_count(a), up.verdict_count(a)) << a;
  EXPECT_EQ(down.fault_count(vm::Fault::kOutOfBounds), 4u);
}

// With a ring buffer sink set (knod run prints the records), the records leave the ring after
// every packet, as Runtime::run_packet does: 400 packets of one 16-byte record each would
// fill the 4 KiB ring (~170 records) if it were drained once per run.
// The program copies the packet's first 16 bytes into the ring (bpf_ringbuf_output from the
// packet), then XDP_PASS. Packet i starts with the bytes of i (little endian).
loader::Object ring_object() {
  loader::Object obj;
  obj.path = "mem";
  obj.maps.push_back(maps::create_map("ring", {BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, -1}, 1));
  InsnVec p;
  p << ldx(BPF_W, 2, 1, 0) << ldx(BPF_W, 3, 1, 4) << mov64_reg(4, 2) << alu64_imm(BPF_ADD, 4, 16)
    << mov64_imm(0, XDP_DROP) << jmp_reg(BPF_JGT, 4, 3, 7);
  ld_map(p, 1, 0);
  p << mov64_imm(3, 16) << mov64_imm(4, 0) << call(BPF_FUNC_ringbuf_output)
    << mov64_imm(0, XDP_PASS) << exit_insn() << exit_insn();
  obj.programs.push_back({"p", "xdp", BPF_PROG_TYPE_XDP, p});
  return obj;
}

void fill_numbered(device::BatchStore& st, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    st.b.data_off[i] = device::kXdpHeadroom;
    st.b.data_len[i] = 64;
    std::memcpy(st.slot(i) + device::kXdpHeadroom, &i, sizeof i);
  }
}

// With a ring buffer sink set (knod run prints the records), the records leave the ring after
// every packet, as Runtime::run_packet does: 400 packets of one 16-byte record each would
// fill the 4 KiB ring (~170 records) if it were drained once per run. They come out in packet
// order, also for a worker that walks its slice down (backward is ignored with a sink).
TEST_P(RunPackets, OutputSinksAreDrainedAfterEveryPacketInOrder) {
  loader::Object obj = ring_object();
  Options opts;
  std::vector<uint32_t> records;
  opts.ringbuf = [&](const maps::Map&, const uint8_t* d, size_t n) {
    EXPECT_EQ(n, 16u);
    uint32_t v;
    std::memcpy(&v, d, sizeof v);
    records.push_back(v);
  };
  Runtime rt(obj, "p", opts);
  jit::JitExecutor jit(options(GetParam()));
  constexpr uint32_t kPackets = 400;
  device::BatchStore st(kPackets);
  fill_numbered(st, kPackets);
  for (bool backward : {false, true}) {
    records.clear();
    rt.run_packets(jit, st.b, 0, kPackets, 0, backward);
    ASSERT_EQ(records.size(), kPackets) << "backward " << backward;
    for (uint32_t i = 0; i < kPackets; ++i) EXPECT_EQ(records[i], i) << "backward " << backward;
  }
  EXPECT_EQ(rt.verdict_count(XDP_PASS), 2 * kPackets);
}

// A sink that throws: the run finishes every packet (the compiled loop cannot unwind), counts
// them, and run_packets then throws the first exception.
TEST_P(RunPackets, ASinkThatThrowsStopsNothingAndIsRethrown) {
  loader::Object obj = ring_object();
  Options opts;
  uint32_t calls = 0;
  opts.ringbuf = [&](const maps::Map&, const uint8_t*, size_t) {
    if (++calls == 3) throw std::runtime_error("sink full");
  };
  Runtime rt(obj, "p", opts);
  jit::JitExecutor jit(options(GetParam()));
  constexpr uint32_t kPackets = 10;
  device::BatchStore st(kPackets);
  fill_numbered(st, kPackets);
  EXPECT_THROW(rt.run_packets(jit, st.b, 0, kPackets, 0), std::runtime_error);
  EXPECT_EQ(calls, kPackets + 1);  // the record whose call threw stays in the ring, comes again
  EXPECT_EQ(rt.verdict_count(XDP_PASS), kPackets);
}

INSTANTIATE_TEST_SUITE_P(SlotLoop, RunPackets, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "compiled" : "in_knod"; });

// BatchStore's arrays: each on pages of its own, at least a page past the previous array's
// last byte (no line shared, a prefetcher's overrun lands in the gap), all zero, and the
// frames at kFrameSize apart.
TEST(BatchStoreLayout, ArraysOnTheirOwnPagesAGapApart) {
  for (uint32_t cap : {1u, 100u, 1024u, 1230u}) {
    device::BatchStore s(cap);
    const device::Batch& b = s.b;
    EXPECT_EQ(b.count, cap);
    EXPECT_EQ(b.stride, device::kSlotPitch);  // frames a line more than a page apart
    EXPECT_EQ(b.frame_sz, device::kFrameSize);
    EXPECT_EQ(device::frame_size(b), device::kFrameSize);
    struct Array {
      const void* p;
      size_t bytes;
    };
    const Array arrays[] = {
        {b.data_off, cap * 4u},        {b.data_len, cap * 4u},       {b.meta_len, cap * 4u},
        {b.ingress_ifindex, cap * 4u}, {b.rx_queue_index, cap * 4u}, {b.verdict, cap * 4u},
        {b.redirect, cap * 8u},        {s.clock(), cap * 8u},        {b.fault, cap * 1u}};
    for (size_t k = 0; k < std::size(arrays); ++k) {
      const auto at = reinterpret_cast<uintptr_t>(arrays[k].p);
      EXPECT_EQ(at % 4096, 0u) << "cap " << cap << " array " << k;
      const auto* bytes = static_cast<const uint8_t*>(arrays[k].p);
      EXPECT_TRUE(std::all_of(bytes, bytes + arrays[k].bytes, [](uint8_t x) { return x == 0; }));
      if (k > 0) {
        const auto prev_end = reinterpret_cast<uintptr_t>(arrays[k - 1].p) + arrays[k - 1].bytes;
        EXPECT_GE(at, prev_end + 4096) << "cap " << cap << " array " << k;
      }
    }
    EXPECT_EQ(s.slot(cap - 1), b.frames + size_t(cap - 1) * device::kSlotPitch);
  }
  device::BatchStore gpu(4, device::kFrameSize);  // a GPU's batches: one frame a slot
  EXPECT_EQ(gpu.b.stride, device::kFrameSize);
  EXPECT_EQ(device::frame_size(gpu.b), device::kFrameSize);
}

// r0 = XDP_PASS if bpf_xdp_adjust_tail(ctx, delta) returns 0, else XDP_DROP.
loader::Object tail_object(int32_t delta) {
  loader::Object obj;
  obj.path = "mem";
  obj.programs.push_back({"p", "xdp", BPF_PROG_TYPE_XDP,
                          prog({
                              mov64_imm(2, delta),
                              call(BPF_FUNC_xdp_adjust_tail),
                              mov64_reg(1, 0),
                              mov64_imm(0, XDP_PASS),
                              jmp_imm(BPF_JEQ, 1, 0, 1),
                              mov64_imm(0, XDP_DROP),
                              exit_insn(),
                          })});
  return obj;
}

// The frame a program sees is frame_sz (4096, test_run's page), not the slot stride (4160):
// bpf_xdp_adjust_tail grows a 64-byte packet at XDP_PACKET_HEADROOM by at most 4096 - 320
// (tailroom) - 256 - 64 = 3456 bytes (kernel bpf_xdp_adjust_tail: data_end past
// xdp_data_hard_end is -EINVAL), on the JIT's native loop and the interpreter alike.
TEST_P(RunPackets, TheFrameNotTheStrideBoundsTheTail) {
  for (int32_t delta : {3456, 3457, 3520}) {
    loader::Object obj = tail_object(delta);
    jit::JitExecutor jit(options(GetParam()));
    vm::Interpreter interp;
    for (vm::Executor* ex :
         {static_cast<vm::Executor*>(&jit), static_cast<vm::Executor*>(&interp)}) {
      Runtime rt(obj, "p", {});
      device::BatchStore s(2);
      ASSERT_GT(s.b.stride, device::kFrameSize);
      for (uint32_t i = 0; i < 2; ++i) {
        s.b.data_off[i] = device::kXdpHeadroom;
        s.b.data_len[i] = 64;
        s.b.ingress_ifindex[i] = 1;
      }
      rt.run_packets(*ex, s.b, 0, 2, 0);
      const bool fits = delta <= 3456;
      for (uint32_t i = 0; i < 2; ++i) {
        EXPECT_EQ(s.b.verdict[i], fits ? uint32_t(XDP_PASS) : uint32_t(XDP_DROP))
            << "delta " << delta << (ex == &jit ? " jit" : " interp");
        EXPECT_EQ(s.b.data_len[i], fits ? 64u + uint32_t(delta) : 64u) << "delta " << delta;
      }
    }
  }
}

}  // namespace
}  // namespace knod::xdp
