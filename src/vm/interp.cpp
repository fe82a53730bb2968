// Reference interpreter (see interp.h). Opcode semantics: RFC 9669 §4 (arithmetic, jumps),
// §5 (load/store, atomics); edge cases from the kernel's ___bpf_prog_run (kernel/bpf/core.c).
#include "vm/interp.h"

#include <cstring>

#include "vm/alu.h"

namespace knod::vm {
namespace {

constexpr int32_t kLoadAcquire = 0x100;   // BPF_LOAD_ACQ
constexpr int32_t kStoreRelease = 0x110;  // BPF_STORE_REL

struct Frame {
  const Program* prog = nullptr;  ///< program to return into
  size_t ret_pc = 0;
  uint64_t saved[5] = {};  ///< r6-r9, r10 of the caller
};

/// Per-run state shared by nested executions (bpf_loop callbacks).
struct Machine {
  Run& run;
  alignas(16) uint8_t stack[kMaxCallDepth * kStackSize];
  int region = -1;
  int depth = 0;  ///< current frame, 0 = main
  const Program* prog = nullptr;
  bool fault_pc_set = false;

  explicit Machine(Run& r) : run(r) {}
  uint64_t top(int d) const {
    return reinterpret_cast<uint64_t>(stack) + uint64_t(kMaxCallDepth - d) * kStackSize;
  }
  /// The active frames [top(depth) - 512, top(0)) are the stack region of the run.
  void set_depth(int d) {
    depth = d;
    run.regions[region].lo = top(d) - kStackSize;
    std::memset(reinterpret_cast<void*>(top(d) - kStackSize), 0, kStackSize);
  }
  void pop_to(int d) {
    depth = d;
    run.regions[region].lo = top(d) - kStackSize;
  }
  uint64_t fault(Fault f, size_t pc) {
    if (run.fault == Fault::kNone) {
      run.fault = f;
      run.fault_pc = static_cast<uint32_t>(pc);
    }
    fault_pc_set = true;
    return 0;
  }

  bool in_ctx(uint64_t addr) const {
    return run.ctx_hi > run.ctx_lo && addr >= run.ctx_lo && addr < run.ctx_hi;
  }

  /// Loads `size` bytes at addr (zero-extended); false with the fault set.
  bool load(uint64_t addr, uint32_t size, uint64_t* v, size_t pc) {
    if (in_ctx(addr) && run.ctx_load) {
      if (run.ctx_load(run, static_cast<uint32_t>(addr - run.ctx_lo), size, v)) return true;
      fault(run.fault != Fault::kNone ? run.fault : Fault::kCtxAccess, pc);
      return false;
    }
    if (!run.can_access(addr, size, false)) {
      fault(Fault::kOutOfBounds, pc);
      return false;
    }
    *v = 0;
    std::memcpy(v, reinterpret_cast<const void*>(addr), size);  // little-endian host
    return true;
  }
  bool store(uint64_t addr, uint32_t size, uint64_t v, size_t pc) {
    if (in_ctx(addr) && run.ctx_store) {
      if (run.ctx_store(run, static_cast<uint32_t>(addr - run.ctx_lo), size, v)) return true;
      fault(run.fault != Fault::kNone ? run.fault : Fault::kCtxAccess, pc);
      return false;
    }
    if (!run.can_access(addr, size, true)) {
      fault(Fault::kOutOfBounds, pc);
      return false;
    }
    std::memcpy(reinterpret_cast<void*>(addr), &v, size);
    return true;
  }

  uint64_t exec(const Program* prog, size_t pc, uint64_t* reg, int base_depth);
  bool atomic(const Insn& i, uint64_t* reg, size_t pc);
  /// Enters a bpf-to-bpf call: false (fault set) beyond kMaxCallDepth frames.
  bool push(const Program* prog, size_t ret_pc, uint64_t* reg, size_t pc) {
    if (depth + 1 >= kMaxCallDepth) {
      fault(Fault::kCallDepth, pc);
      return false;
    }
    Frame& f = frames[depth + 1];
    f.prog = prog;
    f.ret_pc = ret_pc;
    for (int k = 0; k < 5; ++k) f.saved[k] = reg[6 + k];
    set_depth(depth + 1);
    reg[10] = top(depth);
    return true;
  }

  Frame frames[kMaxCallDepth];
};

template <typename T>
T host_atomic(int32_t op, T* p, T v) {
  switch (op & ~BPF_FETCH) {
    case BPF_ADD:
      return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case BPF_OR:
      return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    case BPF_AND:
      return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case BPF_XOR:
      return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    default:
      return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);  // BPF_XCHG
  }
}

bool Machine::atomic(const Insn& i, uint64_t* reg, size_t pc) {
  const uint32_t size = bpf_size_bytes(i.code);
  if (i.imm == kLoadAcquire || i.imm == kStoreRelease) {
    if (i.imm == kLoadAcquire) {
      uint64_t v;
      if (!load(reg[i.src_reg] + i.off, size, &v, pc)) return false;
      reg[i.dst_reg] = v;
      return true;
    }
    return store(reg[i.dst_reg] + i.off, size, reg[i.src_reg], pc);
  }
  const uint64_t addr = reg[i.dst_reg] + i.off;
  if (size != 4 && size != 8) return fault(Fault::kBadInsn, pc), false;
  if (in_ctx(addr)) return fault(Fault::kCtxAccess, pc), false;
  if (!run.can_access(addr, size, true) || addr % size != 0)
    return fault(Fault::kOutOfBounds, pc), false;
  const bool fetch = (i.imm & BPF_FETCH) != 0;
  switch (i.imm) {
    case BPF_ADD:
    case BPF_OR:
    case BPF_AND:
    case BPF_XOR:
    case BPF_ADD | BPF_FETCH:
    case BPF_OR | BPF_FETCH:
    case BPF_AND | BPF_FETCH:
    case BPF_XOR | BPF_FETCH:
    case BPF_XCHG: {
      uint64_t old;
      if (size == 4)
        old = host_atomic<uint32_t>(i.imm, reinterpret_cast<uint32_t*>(addr),
                                    static_cast<uint32_t>(reg[i.src_reg]));
      else
        old = host_atomic<uint64_t>(i.imm, reinterpret_cast<uint64_t*>(addr), reg[i.src_reg]);
      if (fetch) reg[i.src_reg] = old;
      return true;
    }
    case BPF_CMPXCHG: {
      if (size == 4) {
        uint32_t expected = static_cast<uint32_t>(reg[0]);
        __atomic_compare_exchange_n(reinterpret_cast<uint32_t*>(addr), &expected,
                                    static_cast<uint32_t>(reg[i.src_reg]), false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        reg[0] = expected;  // the old value, zero-extended
      } else {
        uint64_t expected = reg[0];
        __atomic_compare_exchange_n(reinterpret_cast<uint64_t*>(addr), &expected, reg[i.src_reg],
                                    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        reg[0] = expected;
      }
      return true;
    }
  }
  return fault(Fault::kBadInsn, pc), false;
}

uint64_t call_func_hook(Run& run, uint64_t func, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                        uint64_t r5);

uint64_t Machine::exec(const Program* p, size_t pc, uint64_t* reg, int base_depth) {
  const Insn* insns = p->insns.data();
  size_t n = p->insns.size();
  prog = p;
  for (;;) {
    if (pc >= n) return fault(Fault::kBadInsn, pc);
    if (++run.insns_executed > run.insn_budget) return fault(Fault::kInsnBudget, pc);
    const Insn& i = insns[pc];
    if (i.dst_reg >= kNumRegs || i.src_reg >= kNumRegs) return fault(Fault::kBadInsn, pc);
    const uint8_t cls = BPF_CLASS(i.code);
    switch (cls) {
      case BPF_ALU:
      case BPF_ALU64: {
        const uint64_t src = BPF_SRC(i.code) == BPF_X
                                 ? reg[i.src_reg]
                                 : static_cast<uint64_t>(static_cast<int64_t>(i.imm));
        if (!alu(i, reg[i.dst_reg], src)) return fault(Fault::kBadInsn, pc);
        ++pc;
        continue;
      }
      case BPF_LDX: {
        const uint8_t mode = BPF_MODE(i.code);
        const uint32_t size = bpf_size_bytes(i.code);
        if (mode != BPF_MEM && mode != BPF_MEMSX) return fault(Fault::kBadInsn, pc);
        uint64_t v;
        if (!load(reg[i.src_reg] + i.off, size, &v, pc)) return 0;
        if (mode == BPF_MEMSX) v = sign_extend(v, size * 8);
        reg[i.dst_reg] = v;
        ++pc;
        continue;
      }
      case BPF_ST:
      case BPF_STX: {
        const uint8_t mode = BPF_MODE(i.code);
        if (cls == BPF_STX && mode == BPF_ATOMIC) {
          if (!atomic(i, reg, pc)) return 0;
        } else {
          if (mode != BPF_MEM) return fault(Fault::kBadInsn, pc);
          const uint64_t v =
              cls == BPF_STX ? reg[i.src_reg] : static_cast<uint64_t>(int64_t(i.imm));
          if (!store(reg[i.dst_reg] + i.off, bpf_size_bytes(i.code), v, pc)) return 0;
        }
        ++pc;
        continue;
      }
      case BPF_LD: {
        if (!is_lddw(i) || pc + 1 >= n) return fault(Fault::kBadInsn, pc);
        const uint64_t v =
            uint64_t(uint32_t(i.imm)) | (uint64_t(uint32_t(insns[pc + 1].imm)) << 32);
        if (i.src_reg == 0)
          reg[i.dst_reg] = v;
        else if (i.src_reg == BPF_PSEUDO_FUNC)
          reg[i.dst_reg] = kFuncTag | uint32_t(int64_t(pc) + 1 + i.imm);
        else
          return fault(Fault::kBadInsn, pc);  // not prepared
        pc += 2;
        continue;
      }
      case BPF_JMP:
      case BPF_JMP32:
        break;
    }
    // Jumps, calls, exit.
    const uint8_t op = BPF_OP(i.code);
    if (op == BPF_EXIT) {
      if (cls != BPF_JMP) return fault(Fault::kBadInsn, pc);
      if (depth == base_depth) return reg[0];
      const Frame& f = frames[depth];
      for (int k = 0; k < 5; ++k) reg[6 + k] = f.saved[k];
      pop_to(depth - 1);
      prog = p = f.prog;
      insns = p->insns.data();
      n = p->insns.size();
      pc = f.ret_pc;
      continue;
    }
    if (op == BPF_CALL) {
      if (cls != BPF_JMP) return fault(Fault::kBadInsn, pc);
      int64_t helper = i.imm;
      if (BPF_SRC(i.code) == BPF_X || i.src_reg == BPF_PSEUDO_CALL) {
        uint64_t target;
        if (BPF_SRC(i.code) == BPF_X) {
          const uint64_t v = reg[i.dst_reg];
          if ((v & kFuncTagMask) != kFuncTag) {
            helper = v < uint64_t(kMaxHelperId) ? int64_t(v) : -1;
            goto call_helper;
          }
          target = v & 0xffff'ffffu;
        } else {
          target = uint64_t(int64_t(pc) + 1 + i.imm);
        }
        if (target >= n) return fault(Fault::kBadInsn, pc);
        if (!push(p, pc + 1, reg, pc)) return 0;
        pc = target;
        continue;
      }
      if (i.src_reg != 0) return fault(Fault::kBadInsn, pc);
    call_helper:
      const HelperTable* table = run.env ? run.env->helpers : nullptr;
      if (helper < 0 || helper >= kMaxHelperId || !table || !table->fn[helper])
        return fault(Fault::kBadHelper, pc);
      const uint64_t r1 = reg[1];
      fault_pc_set = false;
      const uint64_t r0 = table->fn[helper](run, reg[1], reg[2], reg[3], reg[4], reg[5]);
      prog = p;  // a callback may have run another frame
      if (run.fault != Fault::kNone) {
        if (!fault_pc_set) run.fault_pc = static_cast<uint32_t>(pc);
        fault_pc_set = true;
        return 0;
      }
      reg[0] = r0;
      if (run.exit_now) return r0;
      if (const Program* t = run.tail_target) {
        run.tail_target = nullptr;
        if (run.tail_calls < static_cast<uint32_t>(kMaxTailCalls)) {
          run.tail_calls++;
          for (int k = 0; k < 10; ++k) reg[k] = 0;
          reg[1] = r1;
          set_depth(depth);  // fresh stack for the replaced frame
          reg[10] = top(depth);
          prog = p = t;
          insns = p->insns.data();
          n = p->insns.size();
          pc = 0;
          continue;
        }
      }
      ++pc;
      continue;
    }
    // ja and conditional jumps
    int32_t off = i.off;
    bool taken;
    if (op == BPF_JA) {
      if (cls == BPF_JMP32) off = i.imm;
      taken = true;
    } else {
      const uint64_t src = BPF_SRC(i.code) == BPF_X
                               ? reg[i.src_reg]
                               : static_cast<uint64_t>(static_cast<int64_t>(i.imm));
      std::optional<bool> c = jump_taken(op, cls == BPF_JMP32, reg[i.dst_reg], src);
      if (!c) return fault(Fault::kBadInsn, pc);
      taken = *c;
    }
    pc = taken ? size_t(int64_t(pc) + 1 + off) : pc + 1;
  }
}

uint64_t call_func_hook(Run& run, uint64_t func, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                        uint64_t r5) {
  auto* m = static_cast<Machine*>(run.executor);
  if (!m || (func & kFuncTagMask) != kFuncTag || !m->prog ||
      (func & 0xffff'ffffu) >= m->prog->insns.size()) {
    run.fault = Fault::kBadHelper;
    return 0;
  }
  if (m->depth + 1 >= kMaxCallDepth) {
    run.fault = Fault::kCallDepth;
    return 0;
  }
  const Program* caller = m->prog;
  const int saved_depth = m->depth;
  m->set_depth(saved_depth + 1);
  uint64_t reg[kNumRegs] = {0, r1, r2, r3, r4, r5, 0, 0, 0, 0, m->top(m->depth)};
  const uint64_t r0 = m->exec(caller, func & 0xffff'ffffu, reg, m->depth);
  m->pop_to(saved_depth);
  m->prog = caller;
  return r0;
}

}  // namespace

uint64_t Interpreter::run(Run& run, const Program& prog, uint64_t r1, uint64_t r2) {
  Machine m(run);
  const uint32_t saved_nregions = run.nregions;
  m.region = run.add_region(0, 0, true);
  if (m.region < 0) return m.fault(Fault::kOutOfBounds, 0);
  run.regions[m.region].hi = m.top(0);
  m.set_depth(0);
  void* saved_executor = run.executor;
  auto saved_call_func = run.call_func;
  run.executor = &m;
  run.call_func = &call_func_hook;

  uint64_t reg[kNumRegs] = {0, r1, r2, 0, 0, 0, 0, 0, 0, 0, m.top(0)};
  uint64_t r0 = m.exec(&prog, 0, reg, 0);
  if (run.fault != Fault::kNone) r0 = 0;

  run.executor = saved_executor;
  run.call_func = saved_call_func;
  if (run.nregions == static_cast<uint32_t>(m.region) + 1)
    run.nregions = saved_nregions;
  else
    run.regions[m.region] = Region{};
  return r0;
}

}  // namespace knod::vm
