// Interpreter behaviour beyond single opcodes: memory bounds, budget, bpf-to-bpf frames,
// helpers (exit_now, faults, tail calls, callbacks), ctx hooks.
#include <cstring>
#include <random>

#include "base/error.h"
#include "verifier/verifier.h"
#include "vm_test_util.h"

namespace knod::vm::test {
namespace {

TEST(InterpBounds, StackFrame) {
  EXPECT_EQ(run_asm("ldxb %r0, [%r10-512]\nexit").fault, Fault::kNone);
  // Direct r10 accesses outside the frame fail to load (verifier); through a copy of r10 the
  // run-time bound catches them.
  Result under = run_asm("mov %r0, 0\nmov %r2, %r10\nldxb %r0, [%r2-513]\nexit");
  EXPECT_EQ(under.fault, Fault::kOutOfBounds);
  EXPECT_EQ(under.fault_pc, 2u);
  EXPECT_EQ(under.r0, 0u);
  EXPECT_EQ(run_asm("mov %r2, %r10\nstxdw [%r2], %r1\nexit").fault,
            Fault::kOutOfBounds);  // above top
  EXPECT_EQ(run_asm("mov %r2, %r10\nstxdw [%r2-4], %r1\nexit").fault,
            Fault::kOutOfBounds);  // straddles
  EXPECT_EQ(run_asm("mov %r0, 1\nstxdw [%r10-8], %r0\nexit").r0, 1u);
}

TEST(InterpBounds, InputMemory) {
  std::vector<uint8_t> mem = {1, 2, 3, 4};
  EXPECT_EQ(run_asm("ldxw %r0, [%r1]\nexit", mem).r0, 0x04030201u);
  EXPECT_EQ(run_asm("ldxb %r0, [%r1+3]\nexit", mem).r0, 4u);
  EXPECT_EQ(run_asm("ldxw %r0, [%r1+1]\nexit", mem).fault, Fault::kOutOfBounds);
  EXPECT_EQ(run_asm("ldxb %r0, [%r1+4]\nexit", mem).fault, Fault::kOutOfBounds);
  EXPECT_EQ(run_asm("ldxb %r0, [%r1-1]\nexit", mem).fault, Fault::kOutOfBounds);
  EXPECT_EQ(run_asm("stb [%r1+4], 1\nexit", mem).fault, Fault::kOutOfBounds);
  EXPECT_EQ(run_asm("mov %r0, 0\nlock add [%r1+4], %r0\nexit", mem).fault, Fault::kOutOfBounds);
  // r2 holds the length; reading [r1 + r2 - 1] is the last byte
  EXPECT_EQ(run_asm("add %r1, %r2\nldxb %r0, [%r1-1]\nexit", mem).r0, 4u);
  EXPECT_EQ(run_asm("ldxb %r0, [%r1]\nexit").fault, Fault::kOutOfBounds);  // r1 = 0
}

TEST(InterpBounds, ReadOnlyRegion) {
  std::vector<uint8_t> ro = {7, 0, 0, 0};
  Env env;
  env.helpers = &conformance_helpers();
  Program p = prepare("ro", isa::assemble("ldxb %r0, [%r1]\nstb [%r1], 1\nexit"), env);
  vm::Run run;
  run.env = &env;
  const uint64_t base = reinterpret_cast<uint64_t>(ro.data());
  run.add_region(base, base + ro.size(), false);
  Interpreter interp;
  EXPECT_EQ(interp.run(run, p, base, ro.size()), 0u);
  EXPECT_EQ(run.fault, Fault::kOutOfBounds);
  EXPECT_EQ(run.fault_pc, 1u);
  EXPECT_EQ(ro[0], 7);
  EXPECT_EQ(run.nregions, 1u);  // the stack region is gone after the run
}

TEST(InterpBudget, InfiniteLoopStops) {
  Result r = run_asm("mov %r0, 1\nja -1", {}, 1000);
  EXPECT_EQ(r.fault, Fault::kInsnBudget);
  EXPECT_EQ(r.r0, 0u);
  EXPECT_EQ(r.insns, 1001u);
  EXPECT_EQ(r.fault_pc, 1u);
}

TEST(InterpCalls, FramesArePrivateAndCalleeSavedRegsKept) {
  const char* text =
      "mov %r6, 6\nmov %r9, 9\nstdw [%r10-8], 11\nmov %r1, %r10\nadd %r1, -8\n"
      "call local f\n"
      "ldxdw %r2, [%r10-8]\n"  // caller's slot untouched by the callee's own [r10-8]
      "lsh %r0, 16\nor %r0, %r2\nlsh %r0, 8\nor %r0, %r6\nlsh %r0, 8\nor %r0, %r9\nexit\n"
      "f:\nldxdw %r0, [%r1]\n"  // the caller's stack through a pointer
      "stdw [%r10-8], 99\nmov %r6, 0\nmov %r9, 0\nexit";
  Result r = run_asm(text);
  EXPECT_EQ(r.fault, Fault::kNone);
  EXPECT_EQ(r.r0, (uint64_t{11} << 32) | (11u << 16) | (6u << 8) | 9u);
}

TEST(InterpCalls, ReturnedFrameIsNoLongerAddressable) {
  // After f returns, its stack (just below the caller's frame) is out of bounds again.
  Result r = run_asm(
      "call local f\nmov %r1, %r10\nldxdw %r0, [%r1-520]\nexit\nf:\nstdw [%r10-8], 1\nexit");
  EXPECT_EQ(r.fault, Fault::kOutOfBounds);
  EXPECT_EQ(r.fault_pc, 2u);
}

/// main -> f1 -> ... -> f(frames-1); the deepest returns `frames`.
Program call_chain(int frames) {
  std::string text;
  for (int k = 0; k < frames; ++k) {
    text += "f" + std::to_string(k) + ":\n";
    if (k + 1 < frames)
      text += "call local f" + std::to_string(k + 1) + "\n";
    else
      text += "mov %r0, " + std::to_string(frames) + "\n";
    text += "exit\n";
  }
  return Program{"chain", isa::assemble(text)};  // not prepared: the verifier rejects 9
}

TEST(InterpCalls, DepthLimit) {
  Env env;
  Interpreter interp;
  vm::Run ok;
  ok.env = &env;
  Program eight = call_chain(kMaxCallDepth);
  EXPECT_EQ(interp.run(ok, eight, 0, 0), 8u);
  EXPECT_EQ(ok.fault, Fault::kNone);
  vm::Run bad;
  bad.env = &env;
  Program nine = call_chain(kMaxCallDepth + 1);
  EXPECT_EQ(interp.run(bad, nine, 0, 0), 0u);
  EXPECT_EQ(bad.fault, Fault::kCallDepth);
  EXPECT_EQ(bad.fault_pc, 14u);  // the call in f7: slots f0..f6 are 2 each
  vm::Run rec;
  rec.env = &env;
  Program self{"self", isa::assemble("f:\ncall local f\nexit")};
  interp.run(rec, self, 0, 0);
  EXPECT_EQ(rec.fault, Fault::kCallDepth);
}

TEST(InterpHelpers, UnwindStopsAtOnce) {
  Result r = run_asm("mov %r0, 7\nmov %r1, 0\ncall 5\nmov %r0, 2\nexit");
  EXPECT_EQ(r.fault, Fault::kNone);
  EXPECT_EQ(r.r0, 0u);
  EXPECT_EQ(run_asm("mov %r1, 3\ncall 5\nexit").r0, 3u);
  EXPECT_EQ(run_asm("mov %r1, -1\nmov %r2, 5\ncall %r2\nmov %r0, 2\nexit").r0, 2u);  // callx
}

uint64_t bad_arg(vm::Run& run, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  run.fault = Fault::kBadHelper;
  return 0;
}

uint64_t tail_call(vm::Run& run, uint64_t, uint64_t, uint64_t idx, uint64_t, uint64_t) {
  if (idx >= run.env->programs.size()) return uint64_t(-2);  // -ENOENT
  run.tail_target = run.env->programs[idx];
  return uint64_t(-2);
}

uint64_t loop(vm::Run& run, uint64_t nr, uint64_t fn, uint64_t ctx, uint64_t, uint64_t) {
  uint64_t i = 0;
  for (; i < nr; ++i) {
    uint64_t r = run.call_func(run, fn, i, ctx, 0, 0, 0);
    if (run.fault != Fault::kNone) return 0;
    if (r == 1) return i + 1;
  }
  return i;
}

HelperTable test_helpers() {
  HelperTable t = conformance_helpers();
  t.fn[12] = &tail_call;
  t.fn[100] = &bad_arg;
  t.fn[181] = &loop;
  return t;
}

// bpf_loop(2^19, cb) with a two-instruction callback runs ~1.05M instructions: the kernel runs
// it (BPF_MAX_LOOPS is 8M), so the default budget must too (fresh-eyes: 1M aborted it).
TEST(InterpBudget, DefaultBudgetRunsLongBpfLoops) {
  HelperTable t = test_helpers();
  Result r = run_asm(
      "mov %r1, 524288\nlddw %r2, func(cb)\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\n"
      "cb:\nmov %r0, 0\nexit",
      {}, kDefaultInsnBudget, &t);
  EXPECT_EQ(r.fault, Fault::kNone);
  EXPECT_EQ(r.r0, 524288u);
  EXPECT_GT(r.insns, 1'000'000u);
}

TEST(InterpHelpers, FaultFromHelper) {
  HelperTable t = test_helpers();
  Result r = run_asm("mov %r0, 1\ncall 100\nexit", {}, 1000, &t);
  EXPECT_EQ(r.fault, Fault::kBadHelper);
  EXPECT_EQ(r.fault_pc, 1u);
  EXPECT_EQ(r.r0, 0u);
}

TEST(InterpHelpers, UnknownHelperFailsToLoad) {
  Env env;
  env.helpers = &conformance_helpers();
  try {
    prepare("x", isa::assemble("mov %r0, 0\ncall 77\nexit"), env);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown helper 77 (insn 1)");
  }
}

TEST(InterpHelpers, TailCalls) {
  HelperTable t = test_helpers();
  Env env;
  env.helpers = &t;
  // A tail-calls B (index 1) which returns r1; C tail-calls itself until the limit.
  Program a = prepare("a", isa::assemble("mov %r3, 1\ncall 12\nmov %r0, 99\nexit"), env);
  Program b = prepare("b", isa::assemble("mov %r0, %r1\nexit"), env);
  Program c = prepare("c", isa::assemble("mov %r3, 2\ncall 12\nmov %r0, 7\nexit"), env);
  env.programs = {&a, &b, &c};
  Interpreter interp;
  vm::Run r1;
  r1.env = &env;
  EXPECT_EQ(interp.run(r1, a, 1234, 0), 1234u);
  EXPECT_EQ(r1.tail_calls, 1u);
  vm::Run r2;
  r2.env = &env;
  EXPECT_EQ(interp.run(r2, c, 0, 0), 7u);  // 34th attempt falls through
  EXPECT_EQ(r2.tail_calls, static_cast<uint32_t>(kMaxTailCalls));
  EXPECT_EQ(r2.fault, Fault::kNone);
  vm::Run r3;
  r3.env = &env;
  Program miss = prepare("m", isa::assemble("mov %r3, 9\ncall 12\nexit"), env);
  EXPECT_EQ(interp.run(r3, miss, 0, 0), uint64_t(-2));
}

TEST(InterpHelpers, CallbackThroughCallFunc) {
  HelperTable t = test_helpers();
  // bpf_loop(5, cb, &sum, 0): the callback adds its index to the caller's stack slot.
  const char* text =
      "stdw [%r10-8], 0\nmov %r1, 5\nlddw %r2, func(cb)\nmov %r3, %r10\nadd %r3, -8\n"
      "mov %r4, 0\ncall 181\nldxdw %r1, [%r10-8]\nlsh %r0, 8\nor %r0, %r1\nexit\n"
      "cb:\nldxdw %r3, [%r2]\nadd %r3, %r1\nstxdw [%r2], %r3\nmov %r0, 0\nexit";
  Result r = run_asm(text, {}, 10000, &t);
  EXPECT_EQ(r.fault, Fault::kNone);
  EXPECT_EQ(r.r0, (5u << 8) | 10u);  // 5 iterations, 0+1+2+3+4
  // A callback that stops early (returns 1 at index 2) and one that faults.
  Result stop = run_asm(
      "mov %r1, 9\nlddw %r2, func(cb)\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\n"
      "cb:\nmov %r0, 0\njne %r1, 2, +1\nmov %r0, 1\nexit",
      {}, 10000, &t);
  EXPECT_EQ(stop.r0, 3u);
  Result bad = run_asm(
      "mov %r1, 9\nlddw %r2, func(cb)\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\n"
      "cb:\nmov %r3, %r10\nldxb %r0, [%r3+512]\nexit",  // just above the stack
      {}, 10000, &t);
  EXPECT_EQ(bad.fault, Fault::kOutOfBounds);
  EXPECT_EQ(bad.fault_pc, 8u);  // the load in the callback
}

bool ctx_load(vm::Run&, uint32_t off, uint32_t size, uint64_t* v) {
  if (size != 4 || off % 4 != 0 || off >= 8) return false;
  *v = off * 10;
  return true;
}
bool ctx_store(vm::Run&, uint32_t, uint32_t, uint64_t) {
  return false;
}

TEST(InterpCtx, LoadsGoThroughHooks) {
  Env env;
  env.helpers = &conformance_helpers();
  uint64_t ctx_obj[1] = {0};
  const uint64_t ctx = reinterpret_cast<uint64_t>(ctx_obj);
  auto run_ctx = [&](const char* text, Fault* fault) {
    Program p = prepare("ctx", isa::assemble(text), env);
    vm::Run run;
    run.env = &env;
    run.ctx_lo = ctx;
    run.ctx_hi = ctx + 8;
    run.ctx_load = &ctx_load;
    run.ctx_store = &ctx_store;
    Interpreter interp;
    uint64_t r0 = interp.run(run, p, ctx, 0);
    *fault = run.fault;
    return r0;
  };
  Fault f;
  EXPECT_EQ(run_ctx("ldxw %r0, [%r1+4]\nexit", &f), 40u);
  EXPECT_EQ(f, Fault::kNone);
  run_ctx("ldxb %r0, [%r1+4]\nexit", &f);
  EXPECT_EQ(f, Fault::kCtxAccess);
  run_ctx("stw [%r1], 1\nexit", &f);
  EXPECT_EQ(f, Fault::kCtxAccess);
  run_ctx("mov %r2, 1\nlock add [%r1], %r2\nexit", &f);
  EXPECT_EQ(f, Fault::kCtxAccess);
}

// Random slot soup: the interpreter never crashes or hangs, and a program the structural
// verifier accepts never hits an instruction the interpreter cannot run (kBadInsn).
TEST(InterpRobustness, RandomPrograms) {
  std::mt19937_64 rng(12345);
  Env env;
  env.helpers = &conformance_helpers();
  Interpreter interp;
  int verified = 0;
  for (int k = 0; k < 20000; ++k) {
    InsnVec p(1 + rng() % 12);
    for (auto& i : p) {
      uint64_t w = rng();
      std::memcpy(&i, &w, sizeof i);
      if (rng() % 2) i.off = static_cast<int16_t>(int(rng() % 7) - 3);  // nearby targets
      if (rng() % 2) i.imm = static_cast<int32_t>(int(rng() % 9) - 4);
      i.dst_reg %= 11;
      i.src_reg %= 11;
    }
    p.back() = isa::assemble("exit")[0];
    bool ok = true;
    try {
      verifier::check_structure(p);
    } catch (const Error&) {
      ok = false;
    }
    std::vector<uint8_t> mem(16, 0xab);
    vm::Run run;
    run.env = &env;
    run.insn_budget = 200;
    const uint64_t base = reinterpret_cast<uint64_t>(mem.data());
    run.add_region(base, base + mem.size(), true);
    Program prog{"rand", p};
    interp.run(run, prog, base, mem.size());
    if (ok) {
      ++verified;
      EXPECT_NE(run.fault, Fault::kBadInsn) << isa::disassemble(p);
    }
    EXPECT_LE(run.insns_executed, 201u);
  }
  EXPECT_GT(verified, 100);
}

}  // namespace
}  // namespace knod::vm::test
