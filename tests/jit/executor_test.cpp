// JitExecutor behaviour beyond the ISA suite, each case checked against the expected value
// and against the reference interpreter: instruction budget, call depth, frames, tail calls,
// callbacks (Run::call_func), ctx rewriting with proven packet accesses, map value regions.
#include "jit/executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "isa/asm.h"
#include "vm/interp.h"
#include "vm/prepare.h"

namespace knod::jit {
namespace {

// Test helpers (ids as the kernel's where they mean the same).
uint64_t h_tail_call(vm::Run& run, uint64_t, uint64_t, uint64_t idx, uint64_t, uint64_t) {
  if (idx < run.env->programs.size()) run.tail_target = run.env->programs[idx];
  return uint64_t(-22);  // returned only when the tail call does not happen
}
uint64_t h_loop(vm::Run& run, uint64_t n, uint64_t fn, uint64_t ctx, uint64_t, uint64_t) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = run.call_func(run, fn, i, ctx, 0, 0, 0);
    if (run.fault != vm::Fault::kNone || r) return i + 1;
  }
  return n;
}
uint64_t h_add(vm::Run&, uint64_t a, uint64_t b, uint64_t, uint64_t, uint64_t) {
  return a + b;
}

uint64_t h_fault(vm::Run& run, uint64_t a, uint64_t, uint64_t, uint64_t, uint64_t) {
  run.fault = vm::Fault::kBadHelper;
  return a + 1;
}

const vm::HelperTable& helpers() {
  static vm::HelperTable t = [] {
    vm::HelperTable t;
    t.fn[101] = h_fault;
    t.fn[12] = h_tail_call;
    t.fn[181] = h_loop;
    t.fn[100] = h_add;
    return t;
  }();
  return t;
}

struct Result {
  uint64_t r0;
  vm::Fault fault;
};

Result run_on(vm::Executor& ex, vm::Env& env, const vm::Program& p, uint64_t budget = 1'000'000) {
  vm::Run run;
  run.env = &env;
  run.insn_budget = budget;
  uint64_t r0 = ex.run(run, p, 0, 0);
  return {r0, run.fault};
}

// Runs on both executors; returns the JIT's result after checking they agree.
Result both(const char* text, uint64_t budget = 1'000'000) {
  vm::Env env;
  env.helpers = &helpers();
  vm::Program p{"t", isa::assemble(text)};
  env.programs.push_back(&p);
  vm::Interpreter interp;
  JitExecutor jit;
  Result a = run_on(interp, env, p, budget), b = run_on(jit, env, p, budget);
  EXPECT_EQ(a.fault, b.fault) << text;
  EXPECT_EQ(a.r0, b.r0) << text;
  return b;
}

TEST(JitExecutor, InfiniteLoopHitsTheBudget) {
  Result r = both("mov %r0, 0\nl: add %r0, 1\nja l\nexit", 10'000);
  EXPECT_EQ(r.fault, vm::Fault::kInsnBudget);
}

TEST(JitExecutor, BoundedLoopRuns) {
  Result r = both(R"(
    mov %r0, 0
    mov %r1, 100
  l:
    add %r0, %r1
    sub %r1, 1
    jne %r1, 0, l
    exit)");
  EXPECT_EQ(r.fault, vm::Fault::kNone);
  EXPECT_EQ(r.r0, 5050u);
}

TEST(JitExecutor, RecursionFaultsWithCallDepth) {
  Result r = both("call local f\nexit\nf: call local f\nexit");
  EXPECT_EQ(r.fault, vm::Fault::kCallDepth);
}

TEST(JitExecutor, FramesAreSeparateAndCalleeSeesCallerStack) {
  Result r = both(R"(
    mov %r6, 7
    stdw [%r10-8], 40
    mov %r1, %r10
    add %r1, -8
    call local f
    ldxdw %r1, [%r10-8]
    add %r0, %r1
    add %r0, %r6
    exit
  f:
    stdw [%r10-8], 1000
    ldxdw %r2, [%r1+0]
    add %r2, 2
    stxdw [%r1+0], %r2
    mov %r6, 99
    ldxdw %r0, [%r10-8]
    exit)");
  EXPECT_EQ(r.fault, vm::Fault::kNone);
  EXPECT_EQ(r.r0, 1000u + 42 + 7);
}

// r0 of each program, run one after the other on `run` from this one caller frame.
std::vector<uint64_t> back_to_back(JitExecutor& jit, vm::Run& run,
                                   std::initializer_list<const CompiledProgram*> progs) {
  std::vector<uint64_t> r0;
  for (const CompiledProgram* cp : progs) r0.push_back(jit.run_compiled(run, *cp, 0, 0));
  return r0;
}

TEST(JitExecutor, EveryRunSeesAZeroedFrame) {
  // The frame is zeroed only where the code may read before writing (jit/frame_zero.h); what
  // an earlier run (of this program or a deeper one) left there is never seen.
  vm::Env env;
  env.helpers = &helpers();
  vm::Program deep{"deep", isa::assemble("stdw [%r10-8], 9\nstdw [%r10-512], 9\nmov %r0, 0\nexit")};
  vm::Program reads{"reads", isa::assemble(R"(
    ldxdw %r0, [%r10-8]
    ldxdw %r1, [%r10-16]
    or %r0, %r1
    stdw [%r10-8], 5
    stdw [%r10-16], 6
    exit)")};
  // Writes -8 on one path only (r1 != 0): with r1 = 0 it reads what it did not write.
  vm::Program one_path{"one_path", isa::assemble(R"(
    jeq %r1, 0, l
    stdw [%r10-8], 1
  l:
    ldxdw %r0, [%r10-8]
    exit)")};
  env.programs = {&deep, &reads, &one_path};
  JitExecutor jit;
  const CompiledProgram& cd = jit.compile(deep, &env);
  const CompiledProgram& cr = jit.compile(reads, &env);
  const CompiledProgram& co = jit.compile(one_path, &env);
  vm::Run run;
  run.env = &env;
  // Back to back from one caller frame: each run's frame is where the last one's was.
  EXPECT_EQ(back_to_back(jit, run, {&cr, &cr, &cd, &cr, &cd, &co}),
            (std::vector<uint64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(run.fault, vm::Fault::kNone);
  vm::Interpreter interp;
  EXPECT_EQ(run_on(interp, env, reads).r0, 0u);
}

TEST(JitExecutor, ACalleeSeesItsCallersZeroedFrame) {
  // A callee reads its caller's frame through its own r10 (checked, inside the stack region):
  // the caller's frame is zeroed whole, so no run sees what the last one stored there.
  vm::Env env;
  env.helpers = &helpers();
  vm::Program p{"p", isa::assemble(R"(
    call local f
    exit
  f:
    mov %r1, %r10
    add %r1, 496
    ldxdw %r0, [%r1+0]
    mov %r2, 42
    stxdw [%r1+0], %r2
    exit)")};
  env.programs = {&p};
  JitExecutor jit;
  const CompiledProgram& cp = jit.compile(p, &env);
  vm::Run run;
  run.env = &env;
  EXPECT_EQ(back_to_back(jit, run, {&cp, &cp, &cp}), (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(run.fault, vm::Fault::kNone);
  vm::Interpreter interp;
  EXPECT_EQ(run_on(interp, env, p).r0, 0u);
}

TEST(JitExecutor, DeadFrameIsOutOfBounds) {
  // After f returns, its frame (below the caller's) is no longer part of the stack region.
  Result r = both(R"(
    call local f
    mov %r1, %r10
    add %r1, -520
    ldxdw %r0, [%r1+0]
    exit
  f:
    mov %r0, 0
    exit)");
  EXPECT_EQ(r.fault, vm::Fault::kOutOfBounds);
}

TEST(JitExecutor, TailCallReplacesTheProgram) {
  vm::Env env;
  env.helpers = &helpers();
  vm::Program a{"a", isa::assemble("mov %r6, 5\nmov %r3, 1\ncall 12\nmov %r0, 77\nexit")};
  vm::Program b{"b", isa::assemble("mov %r0, 123\nexit")};
  vm::Program self{"self", isa::assemble("mov %r3, 2\ncall 12\nexit")};
  env.programs = {&a, &b, &self};
  vm::Interpreter interp;
  JitExecutor jit;
  EXPECT_EQ(run_on(jit, env, a).r0, 123u);
  EXPECT_EQ(run_on(interp, env, a).r0, 123u);
  // Tail-calling itself: kMaxTailCalls are taken, then the call falls through with -22.
  vm::Run run;
  run.env = &env;
  EXPECT_EQ(jit.run(run, self, 0, 0), uint64_t(-22));
  EXPECT_EQ(run.tail_calls, uint32_t(kMaxTailCalls));
  EXPECT_EQ(run_on(interp, env, self).r0, uint64_t(-22));
}

TEST(JitExecutor, CallbacksRunThroughCallFunc) {
  // bpf_loop(10, cb, &sum): cb adds its index to *ctx; sum = 45.
  Result r = both(R"(
    stdw [%r10-8], 0
    mov %r1, 10
    lddw %r2, func(+8)
    mov %r3, %r10
    add %r3, -8
    call 181
    ldxdw %r0, [%r10-8]
    exit
    mov %r0, 0
    exit
    ldxdw %r3, [%r2+0]
    add %r3, %r1
    stxdw [%r2+0], %r3
    mov %r0, 0
    exit)");
  EXPECT_EQ(r.fault, vm::Fault::kNone);
  EXPECT_EQ(r.r0, 45u);
}

TEST(JitExecutor, UnknownHelperFaults) {
  EXPECT_EQ(both("call 99\nexit").fault, vm::Fault::kBadHelper);
  EXPECT_EQ(both("mov %r1, 2\nmov %r2, 3\ncall 100\nexit").r0, 5u);
}

// With the env known at compile time the JIT calls the table's helpers directly
// (LowerOptions::helpers); a helper's fault still carries its call's pc, as through
// knod_rt_helper.
TEST(JitExecutor, DirectHelperCallsKeepTheFaultPc) {
  vm::Env env;
  env.helpers = &helpers();
  const char* text = "mov %r1, 2\nmov %r2, 3\ncall 100\nmov %r1, %r0\ncall 101\nmov %r0, 1\nexit";
  vm::Program p{"t", isa::assemble(text)};
  vm::Interpreter interp;
  JitExecutor jit;
  EXPECT_EQ(jit.compile(p, &env).stats.direct_helpers, 2u);
  for (vm::Executor* ex : {static_cast<vm::Executor*>(&interp), static_cast<vm::Executor*>(&jit)}) {
    vm::Run run;
    run.env = &env;
    EXPECT_EQ(ex->run(run, p, 0, 0), 0u);  // a faulted run returns 0
    EXPECT_EQ(run.fault, vm::Fault::kBadHelper);
    EXPECT_EQ(run.fault_pc, 4u);
  }
  EXPECT_EQ(jit.compile(p, nullptr).stats.direct_helpers, 0u);  // no table: knod_rt_helper
}

// A fault inside a program that a helper runs keeps its own pc, pc 0 included: here the
// program a bpf_loop callback tail-calls faults at its first instruction (was reported at the
// bpf_loop call, pc 5: fault_pc 0 read as "unset"). With no program to tail-call, the
// callback goes on to a helper that faults itself: the callback's call pc (10), not bpf_loop's.
TEST(JitExecutor, AFaultInAProgramAHelperRunsKeepsItsPc) {
  vm::Env env;
  env.helpers = &helpers();
  const char* loop = R"(
    mov %r1, 1
    lddw %r2, func(+5)
    mov %r3, 0
    mov %r4, 0
    call 181
    exit
    mov %r3, 1
    call 12
    mov %r0, 0
    call 101
    exit)";
  vm::Program main{"main", isa::assemble(loop)};
  vm::Program faults{"faults", isa::assemble("ldxdw %r0, [%r1+0]\nexit")};
  vm::Interpreter interp;
  JitExecutor jit;
  for (const bool tail : {true, false}) {
    env.programs = {&main};
    if (tail) env.programs.push_back(&faults);
    for (vm::Executor* ex :
         {static_cast<vm::Executor*>(&interp), static_cast<vm::Executor*>(&jit)}) {
      vm::Run run;
      run.env = &env;
      ex->run(run, main, 0, 0);
      const char* who = ex == &jit ? "jit" : "interp";
      EXPECT_EQ(run.fault, tail ? vm::Fault::kOutOfBounds : vm::Fault::kBadHelper) << who;
      EXPECT_EQ(run.fault_pc, tail ? 0u : 10u) << who;
    }
  }
}

// Callbacks count toward the call depth with the frames that called them: a bpf_loop
// callback that calls bpf_loop on itself ends with kCallDepth at its bpf_loop call (pc 10)
// once kMaxCallDepth frames are active, on both executors (the JIT's callbacks once started
// at depth 1 each, until the run's region table filled: kOutOfBounds).
TEST(JitExecutor, NestedCallbacksCountTowardTheCallDepth) {
  vm::Env env;
  env.helpers = &helpers();
  vm::Program p{"nest", isa::assemble(R"(
    mov %r1, 1
    lddw %r2, func(+4)
    mov %r3, 0
    call 181
    exit
    mov %r1, 1
    lddw %r2, func(-2)
    mov %r3, 0
    call 181
    mov %r0, 0
    exit)")};
  env.programs = {&p};
  vm::Interpreter interp;
  JitExecutor jit;
  for (vm::Executor* ex : {static_cast<vm::Executor*>(&interp), static_cast<vm::Executor*>(&jit)}) {
    vm::Run run;
    run.env = &env;
    ex->run(run, p, 0, 0);
    const char* who = ex == &jit ? "jit" : "interp";
    EXPECT_EQ(run.fault, vm::Fault::kCallDepth) << who;
    EXPECT_EQ(run.fault_pc, 10u) << who;
  }
}

// A callback runs in the next frame down of its caller's stack region, as a bpf-to-bpf
// call: nested callbacks take no run region each (the JIT's once did, so a run with a
// packet region ran out of regions, kOutOfBounds, before the depth limit). The callback
// counts *ctx (a slot in main's frame, D) down and nests bpf_loop until it reaches 0: D = 6
// is 8 frames (r0 = 1, bpf_loop's count), D = 7 one too many (kCallDepth at its call, pc 19).
TEST(JitExecutor, NestedCallbacksShareTheCallersStackRegion) {
  vm::Env env;
  env.helpers = &helpers();
  uint8_t packet[32] = {};
  for (int d = 0; d <= 9; ++d) {
    const std::string text = "stdw [%r10-8], " + std::to_string(d) + R"(
      mov %r1, 1
      lddw %r2, func(+6)
      mov %r3, %r10
      add %r3, -8
      mov %r4, 0
      call 181
      exit
      ldxdw %r6, [%r2+0]
      mov %r0, 0
      jeq %r6, 0, out
      sub %r6, 1
      stxdw [%r2+0], %r6
      mov %r3, %r2
      mov %r1, 1
      lddw %r2, func(-8)
      mov %r4, 0
      call 181
      mov %r0, 0
    out:
      exit)";
    vm::Program p{"nest", isa::assemble(text)};
    env.programs = {&p};
    vm::Interpreter interp;
    JitExecutor jit;
    for (vm::Executor* ex :
         {static_cast<vm::Executor*>(&interp), static_cast<vm::Executor*>(&jit)}) {
      vm::Run run;
      run.env = &env;
      run.add_region(reinterpret_cast<uint64_t>(packet), reinterpret_cast<uint64_t>(packet) + 32,
                     true);
      const uint64_t r0 = ex->run(run, p, 0, 0);
      const std::string who =
          std::string(ex == &jit ? "jit" : "interp") + " D=" + std::to_string(d);
      if (d <= 6) {
        EXPECT_EQ(run.fault, vm::Fault::kNone) << who;
        EXPECT_EQ(r0, 1u) << who;
      } else {
        EXPECT_EQ(run.fault, vm::Fault::kCallDepth) << who;
        EXPECT_EQ(run.fault_pc, 19u) << who;
      }
    }
  }
}

// A minimal XDP-like ctx: {u32 data, u32 data_end} rewritten to 64-bit packet pointers.
struct Pkt {
  uint8_t bytes[64];
  uint32_t len;
};
bool ctx_load(vm::Run& run, uint32_t off, uint32_t size, uint64_t* v) {
  auto* p = static_cast<Pkt*>(run.prog_state);
  if (size != 4) return false;
  if (off == 0)
    *v = reinterpret_cast<uint64_t>(p->bytes);
  else if (off == 4)
    *v = reinterpret_cast<uint64_t>(p->bytes) + p->len;
  else
    return false;
  return true;
}

TEST(JitExecutor, XdpCtxAndProvenPacketAccesses) {
  vm::Env env;
  env.helpers = &helpers();
  vm::Program p{"parse", isa::assemble(R"(
    ldxw %r2, [%r1+0]
    ldxw %r3, [%r1+4]
    mov %r4, %r2
    add %r4, 14
    mov %r0, 1
    jgt %r4, %r3, out
    ldxh %r0, [%r2+12]
    stb [%r2+0], 0xee
  out:
    exit)")};
  JitOptions o;
  o.ctx = CtxKind::kXdp;
  JitExecutor jit(o);
  vm::Interpreter interp;
  for (uint32_t len : {14u, 13u}) {
    for (vm::Executor* ex :
         {static_cast<vm::Executor*>(&jit), static_cast<vm::Executor*>(&interp)}) {
      Pkt pkt{};
      pkt.len = len;
      pkt.bytes[12] = 0x08;
      uint64_t ctx[2] = {};
      vm::Run run;
      run.env = &env;
      run.prog_state = &pkt;
      run.ctx_lo = reinterpret_cast<uint64_t>(ctx);
      run.ctx_hi = run.ctx_lo + sizeof(ctx);
      run.ctx_load = ctx_load;
      run.add_region(reinterpret_cast<uint64_t>(pkt.bytes),
                     reinterpret_cast<uint64_t>(pkt.bytes) + len, true);
      uint64_t r0 = ex->run(run, p, run.ctx_lo, 0);
      EXPECT_EQ(run.fault, vm::Fault::kNone) << ex->name();
      EXPECT_EQ(r0, len == 14 ? 0x08u : 1u) << ex->name();
      EXPECT_EQ(pkt.bytes[0], len == 14 ? 0xee : 0) << ex->name();
    }
  }
  const CompiledProgram& cp = jit.compile(p);
  EXPECT_EQ(cp.stats.accesses, 4u);
  EXPECT_EQ(cp.stats.ctx_direct, 2u);
  EXPECT_EQ(cp.stats.proven, 2u);
  EXPECT_EQ(cp.stats.checked, 0u);
  EXPECT_GT(cp.compile_ms, 0.0);
}

// A store through a packet pointer the analysis cannot prove is checked against every region
// but the stack's (AccessInfo::off_stack), so the analysis may keep its spilled slots across
// it: with the packet right below the kept stack, a store aimed at the ctx pointer spilled at
// r10 - 8 faults and leaves the slot as it was (knod_rt_check would have let it through).
TEST(JitExecutor, AnUnprovenPacketStoreNeverLandsInTheFrame) {
  constexpr size_t kFrames = size_t(kStackSize) * kMaxCallDepth;
  struct Layout {
    Pkt pkt;
    alignas(16) uint8_t stack[kFrames];
  };
  auto mem = std::make_unique<Layout>();
  const uint64_t data = reinterpret_cast<uint64_t>(mem->pkt.bytes);
  const uint64_t top = reinterpret_cast<uint64_t>(mem->stack) + kFrames;
  const std::string text = "ldxw %r2, [%r1+0]\nstxdw [%r10-8], %r1\nmov %r4, %r2\nadd %r4, " +
                           std::to_string(top - 8 - data) +
                           "\nstdw [%r4+0], 0x1234\nldxdw %r0, [%r10-8]\nexit";
  vm::Program p{"aim", isa::assemble(text)};
  JitOptions o;
  o.ctx = CtxKind::kXdp;
  JitExecutor jit(o);
  vm::Env env;
  env.helpers = &helpers();
  mem->pkt.len = 64;
  uint64_t ctx[2] = {};
  vm::Run run;
  run.env = &env;
  run.prog_state = &mem->pkt;
  run.ctx_lo = reinterpret_cast<uint64_t>(ctx);
  run.ctx_hi = run.ctx_lo + sizeof(ctx);
  run.ctx_load = ctx_load;
  run.add_region(data, data + 64, true);
  run.stack = mem->stack;
  run.stack_region = run.add_region(top - kStackSize, top, true);
  jit.run(run, p, run.ctx_lo, 0);
  EXPECT_EQ(run.fault, vm::Fault::kOutOfBounds);
  EXPECT_EQ(run.fault_pc, 4u);
  uint64_t slot;
  std::memcpy(&slot, mem->stack + kFrames - 8, 8);
  EXPECT_EQ(slot, run.ctx_lo);
  EXPECT_EQ(jit.compile(p, &env).stats.checked, 1u);
}

TEST(JitExecutor, StaticRegionsAreAccessibleOthersFault) {
  alignas(8) static uint64_t value[2] = {5, 0};
  vm::Env env;
  env.helpers = &helpers();
  env.static_regions.push_back(
      vm::Region{reinterpret_cast<uint64_t>(value), reinterpret_cast<uint64_t>(value) + 16, true});
  std::string text = "lddw %r1, " + std::to_string(reinterpret_cast<uint64_t>(value)) +
                     "\nmov %r2, 3\nlock add [%r1+0], %r2\nldxdw %r0, [%r1+0]\nexit";
  vm::Program ok{"ok", isa::assemble(text)};
  JitExecutor jit;
  EXPECT_EQ(run_on(jit, env, ok).r0, 8u);
  std::string bad = "lddw %r1, " + std::to_string(reinterpret_cast<uint64_t>(value)) +
                    "\nldxdw %r0, [%r1+16]\nexit";
  vm::Program oob{"oob", isa::assemble(bad)};
  EXPECT_EQ(run_on(jit, env, oob).fault, vm::Fault::kOutOfBounds);
}

// Load-acquire (BPF_STX | BPF_ATOMIC, imm BPF_LOAD_ACQ 0x100: dst = *(src + off)) and
// store-release (imm BPF_STORE_REL 0x110: *(dst + off) = src), kernel 6.15+, of every size: the
// plain loads and stores they order (here written as such, then re-encoded). Through the stack
// (proven) and through a scalar address (checked: out of bounds faults, as the interpreter's).
Result ordered(const char* text) {
  InsnVec p = isa::assemble(text);
  for (Insn& i : p) {
    const uint8_t size = BPF_SIZE(i.code);
    if (i.code == (BPF_STX | BPF_MEM | size))
      i.code = BPF_STX | BPF_ATOMIC | size, i.imm = 0x110;
    else if (i.code == (BPF_LDX | BPF_MEM | size))
      i.code = BPF_STX | BPF_ATOMIC | size, i.imm = 0x100;
  }
  vm::Env env;
  env.helpers = &helpers();
  vm::Program prog{"t", p};
  vm::Interpreter interp;
  JitExecutor jit;
  Result a = run_on(interp, env, prog), b = run_on(jit, env, prog);
  EXPECT_EQ(a.fault, b.fault) << text;
  EXPECT_EQ(a.r0, b.r0) << text;
  return b;
}

TEST(JitExecutor, LoadAcquireAndStoreReleaseOfEverySize) {
  Result r = ordered(R"(
    lddw %r1, 0x8877665544332211
    stxdw [%r10-8], %r1
    stxh [%r10-10], %r1
    stxb [%r10-11], %r1
    stxw [%r10-16], %r1
    ldxw %r0, [%r10-8]
    ldxb %r2, [%r10-9]
    add %r0, %r2
    ldxh %r2, [%r10-12]
    add %r0, %r2
    ldxdw %r2, [%r10-16]
    xor %r0, %r2
    exit)");
  EXPECT_EQ(r.fault, vm::Fault::kNone);
  // fp-16..fp-1 hold 11 22 33 44 | 00 11 11 22 | 11 22 33 44 55 66 77 88 (fp-12 never
  // written: the zeroed frame). r0 = (0x44332211 + 0x22 + 0x1100) ^ 0x2211110044332211.
  EXPECT_EQ(r.r0, 0x2211110000001122u);
  EXPECT_EQ(ordered("mov %r1, 4096\nldxdw %r0, [%r1+0]\nexit").fault, vm::Fault::kOutOfBounds);
  EXPECT_EQ(ordered("mov %r1, 4096\nmov %r2, 1\nstxw [%r1+0], %r2\nexit").fault,
            vm::Fault::kOutOfBounds);
}

TEST(JitExecutor, CompileTimeIsReportedPerOptLevel) {
  vm::Program p{"p", isa::assemble("mov %r0, 1\nexit")};
  for (int level = 0; level <= 3; ++level) {
    JitOptions o;
    o.opt_level = level;
    JitExecutor jit(o);
    EXPECT_GT(jit.compile(p).compile_ms, 0.0);
    vm::Env env;
    EXPECT_EQ(run_on(jit, env, p).r0, 1u);
  }
}

}  // namespace
}  // namespace knod::jit
