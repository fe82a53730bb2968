// Property test: random valid programs give the same r0, memory and fault (kind and pc) on
// the reference interpreter and on the JIT. Programs are straight-line ALU/ALU64 (all ops,
// edge-case immediates), forward conditional jumps, loads/stores/atomics on the stack and on
// the r1 buffer (some out of bounds on purpose). Fixed seed; thousands of programs.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "isa/asm.h"
#include "jit/executor.h"
#include "vm/conformance_helpers.h"
#include "vm/interp.h"

namespace knod::jit {
namespace {

constexpr int kMem = 64;

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}
  uint64_t u(uint64_t n) { return rng() % n; }
  int32_t imm() {
    static const int32_t edge[] = {0, 1, -1, 2, 31, 32, 63, 64, INT32_MIN, INT32_MAX, 0x80, -8};
    return u(3) ? edge[u(std::size(edge))] : int32_t(rng());
  }
  uint8_t dst() {  // r6 keeps the buffer pointer, r10 is read-only
    static const uint8_t r[] = {0, 1, 2, 3, 4, 5, 7, 8, 9};
    return r[u(std::size(r))];
  }
  // Sources never read r1, r6, r10: their values are addresses, which differ per executor.
  uint8_t src() {
    static const uint8_t r[] = {0, 2, 3, 4, 5, 7, 8, 9};
    return r[u(std::size(r))];
  }
  uint8_t size() {
    static const uint8_t s[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
    return s[u(4)];
  }
  static int bytes(uint8_t sz) { return sz == BPF_B ? 1 : sz == BPF_H ? 2 : sz == BPF_W ? 4 : 8; }
  // A memory operand: stack (r10) or buffer (r6), mostly in bounds.
  uint8_t mem_operand(uint8_t sz, int16_t& off, bool aligned) {
    uint8_t reg;
    int n = bytes(sz);
    if (u(2)) {
      reg = 10;
      off = int16_t(-n * int(1 + u(512 / n)));
      if (!aligned && u(4) == 0) off = int16_t(off + int(u(n)));
      if (u(40) == 0) off = int16_t(u(2) ? 8 : -520);  // out of the frame
    } else {
      reg = 6;
      off = int16_t(n * int(u(kMem / n)));
      if (!aligned && u(4) == 0) off = int16_t(off + int(u(n)));
      if (u(30) == 0) off = int16_t(u(2) ? kMem - n + 1 + int(u(8)) : -1 - int(u(8)));
    }
    return reg;
  }

  InsnVec program() {
    InsnVec p;
    p.push_back(Insn{BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0});
    for (uint8_t r : {0, 2, 3, 4, 5, 7, 8, 9})
      if (u(2)) {
        p.push_back(Insn{BPF_LD | BPF_IMM | BPF_DW, r, 0, 0, int32_t(rng())});
        p.push_back(Insn{0, 0, 0, 0, int32_t(rng())});
      } else {
        p.push_back(Insn{BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, imm()});
      }
    int n = 8 + int(u(40));
    std::vector<size_t> jumps;  // forward jumps, patched to land inside the program
    for (int k = 0; k < n; ++k) {
      int kind = int(u(100));
      Insn i{};
      if (kind < 45) {
        static const uint8_t ops[] = {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR,  BPF_AND, BPF_LSH,
                                      BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH};
        uint8_t op = ops[u(std::size(ops))];
        uint8_t cls = u(2) ? BPF_ALU64 : BPF_ALU;
        uint8_t srcx = u(2) ? BPF_X : BPF_K;
        i = Insn{uint8_t(cls | op | srcx), dst(), 0, 0, 0};
        if (srcx == BPF_X)
          i.src_reg = src();
        else
          i.imm = imm();
        if (op == BPF_NEG) i.code = uint8_t(cls | op | BPF_K), i.imm = 0, i.src_reg = 0;
        if ((op == BPF_DIV || op == BPF_MOD) && u(2)) i.off = 1;  // sdiv / smod
        if (op == BPF_MOV && srcx == BPF_X && u(3) == 0) {
          static const int16_t w[] = {8, 16, 32};
          i.off = w[u(cls == BPF_ALU64 ? 3 : 2)];
        }
      } else if (kind < 52) {  // le/be/bswap
        static const int32_t w[] = {16, 32, 64};
        uint8_t cls = u(3) == 0 ? BPF_ALU64 : BPF_ALU;
        i = Insn{uint8_t(cls | BPF_END | (u(2) ? BPF_TO_BE : BPF_TO_LE)), dst(), 0, 0, w[u(3)]};
        if (cls == BPF_ALU64) i.code = BPF_ALU64 | BPF_END | BPF_TO_LE;
      } else if (kind < 64) {  // forward jump
        static const uint8_t ops[] = {BPF_JEQ,  BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE,  BPF_JSGT,
                                      BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE, BPF_JA};
        uint8_t op = ops[u(std::size(ops))];
        uint8_t cls = u(2) ? BPF_JMP : BPF_JMP32;
        uint8_t srcx = u(2) ? BPF_X : BPF_K;
        i = Insn{uint8_t(cls | op | srcx), src(), 0, 0, 0};
        if (op == BPF_JA)
          i = Insn{BPF_JMP | BPF_JA, 0, 0, 0, 0};
        else if (srcx == BPF_X)
          i.src_reg = src();
        else
          i.imm = imm();
        jumps.push_back(p.size());
      } else if (kind < 80) {  // load
        uint8_t sz = size();
        bool sx = sz != BPF_DW && u(4) == 0;
        i = Insn{uint8_t(BPF_LDX | (sx ? BPF_MEMSX : BPF_MEM) | sz), dst(), 0, 0, 0};
        i.src_reg = mem_operand(sz, i.off, false) & 0xf;
      } else if (kind < 94) {  // store
        uint8_t sz = size();
        bool reg = u(2);
        i = Insn{uint8_t((reg ? BPF_STX : BPF_ST) | BPF_MEM | sz), 0, reg ? src() : uint8_t(0), 0,
                 reg ? 0 : imm()};
        i.dst_reg = mem_operand(sz, i.off, false) & 0xf;
      } else {  // atomic
        static const int32_t ops[] = {BPF_ADD,
                                      BPF_OR,
                                      BPF_AND,
                                      BPF_XOR,
                                      BPF_ADD | BPF_FETCH,
                                      BPF_OR | BPF_FETCH,
                                      BPF_AND | BPF_FETCH,
                                      BPF_XOR | BPF_FETCH,
                                      BPF_XCHG,
                                      BPF_CMPXCHG};
        uint8_t sz = u(2) ? BPF_W : BPF_DW;
        i = Insn{uint8_t(BPF_STX | BPF_ATOMIC | sz), 0, src(), 0, ops[u(std::size(ops))]};
        if (i.src_reg == 0 && i.imm == BPF_CMPXCHG) i.src_reg = 3;
        i.dst_reg = mem_operand(sz, i.off, true) & 0xf;
      }
      p.push_back(i);
    }
    p.push_back(Insn{BPF_JMP | BPF_EXIT, 0, 0, 0, 0});
    for (size_t j : jumps) p[j].off = int16_t(u(p.size() - j - 1));  // target <= exit
    return p;
  }
};

struct Outcome {
  uint64_t r0;
  vm::Fault fault;
  uint32_t fault_pc;
  uint8_t mem[kMem];
};

Outcome execute(vm::Executor& ex, const vm::Program& prog, const uint8_t* init) {
  vm::Env env;
  env.helpers = &vm::conformance_helpers();
  vm::Run run;
  run.env = &env;
  Outcome o{};
  std::memcpy(o.mem, init, kMem);
  uint64_t lo = reinterpret_cast<uint64_t>(o.mem);
  run.add_region(lo, lo + kMem, true);
  o.r0 = ex.run(run, prog, lo, kMem);
  o.fault = run.fault;
  o.fault_pc = run.fault_pc;
  return o;
}

void differential(uint64_t seed, int programs, JitOptions opts) {
  Gen g(seed);
  vm::Interpreter interp;
  JitExecutor jit(opts);
  int faults = 0;
  for (int k = 0; k < programs; ++k) {
    vm::Program prog{"p" + std::to_string(k), g.program()};
    uint8_t init[kMem];
    for (auto& b : init) b = uint8_t(g.rng());
    Outcome a = execute(interp, prog, init);
    Outcome b = execute(jit, prog, init);
    faults += a.fault != vm::Fault::kNone;
    auto text = [&] {
      return "program " + std::to_string(k) + ":\n" + isa::disassemble(prog.insns);
    };
    ASSERT_EQ(a.fault, b.fault) << text();
    ASSERT_EQ(a.fault_pc, b.fault_pc) << text();
    ASSERT_EQ(a.r0, b.r0) << text();
    ASSERT_EQ(0, std::memcmp(a.mem, b.mem, kMem)) << text();
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(faults, programs / 50);
  EXPECT_LT(faults, programs / 2);
}

TEST(JitDifferential, RandomProgramsO2) {
  differential(0x6b6e6f64, 1200, JitOptions{});
}

TEST(JitDifferential, RandomProgramsO0NoRangeAnalysis) {
  JitOptions o;
  o.opt_level = 0;
  o.range_analysis = false;
  differential(0x1234, 800, o);
}

}  // namespace
}  // namespace knod::jit
