// The JIT runtime's out-of-line functions (see rt.h): compiled once into knod like any other
// source, not into each program's module, and given to every program as absolute symbols
// (jit/executor.cpp). A program's module holds only the inline part (rt.cpp), so its
// compile no longer optimises and generates these functions again (vlan: ~150 of its ~1,500
// machine instructions). Semantics follow vm::Run (vm/abi.h) and the reference interpreter.
#include "jit/runtime/rt.h"
#include "vm/abi.h"

using knod::vm::Fault;
using knod::vm::Run;

namespace {

// Same tag as the interpreter (vm/interp.h kFuncTag) for ld_imm64 BPF_PSEUDO_FUNC values.
constexpr uint64_t kFuncTag = 0xfb0f'0000'0000'0000ull;
constexpr uint64_t kFuncTagMask = 0xffff'ffff'0000'0000ull;

}  // namespace

extern "C" {

bool knod_rt_check_regions(Run* run, uint64_t addr, uint32_t len, bool write, int32_t skip) {
  for (uint32_t i = 0; i < run->nregions; ++i)
    if (int32_t(i) != skip && run->regions[i].holds(addr, len, write)) return true;
  return knod_host_static_ok(run, addr, len, write);
}

bool knod_rt_value_ok(const knod::vm::Region* h, uint64_t addr, uint32_t len) {
  return (addr - h->lo) % h->stride + len <= h->value_size;
}

void knod_rt_fault(Run* run, int32_t reason, uint32_t pc) {
  if (run->fault == Fault::kNone) {
    run->fault = static_cast<Fault>(reason);
    run->fault_pc = pc;
  }
}

uint64_t knod_rt_load_slow(Run* run, uint64_t addr, uint32_t size, uint32_t pc) {
  if (run->ctx_load && addr >= run->ctx_lo && addr < run->ctx_hi) {
    uint64_t v = 0;
    if (run->ctx_load(*run, static_cast<uint32_t>(addr - run->ctx_lo), size, &v)) return v;
    knod_rt_fault(run, static_cast<int32_t>(Fault::kCtxAccess), pc);
    return 0;
  }
  knod_rt_fault(run, static_cast<int32_t>(Fault::kOutOfBounds), pc);
  return 0;
}

void knod_rt_store_slow(Run* run, uint64_t addr, uint32_t size, uint64_t value, uint32_t pc) {
  if (run->ctx_store && addr >= run->ctx_lo && addr < run->ctx_hi) {
    if (run->ctx_store(*run, static_cast<uint32_t>(addr - run->ctx_lo), size, value)) return;
    knod_rt_fault(run, static_cast<int32_t>(Fault::kCtxAccess), pc);
    return;
  }
  knod_rt_fault(run, static_cast<int32_t>(Fault::kOutOfBounds), pc);
}

uint64_t knod_rt_ctx_slow(Run* run, uint32_t off, uint32_t size, uint32_t pc) {
  uint64_t v = 0;
  if (run->ctx_load && run->ctx_load(*run, off, size, &v)) return v;
  knod_rt_fault(run, static_cast<int32_t>(Fault::kCtxAccess), pc);
  return 0;
}

uint64_t knod_rt_helper(Run* run, int32_t id, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
                        uint64_t r5, uint32_t pc) {
  const knod::vm::HelperTable* t = run->env ? run->env->helpers : nullptr;
  if (!t || id < 0 || id >= knod::vm::kMaxHelperId || !t->fn[id]) {
    knod_rt_fault(run, static_cast<int32_t>(Fault::kBadHelper), pc);
    return 0;
  }
  // A helper that faults sets run.fault alone: the fault is then the call's. One that runs
  // programs (a callback, the program it tail-calls) may fault in them at any pc, 0 included:
  // that pc stays. Unset while the helper runs (no fault yet: the run would have stopped), and
  // as it was after (a helper nested in a callback leaves its caller's "unset").
  const uint32_t before = run->fault_pc;
  run->fault_pc = kFaultPcUnset;
  uint64_t r0 = t->fn[id](*run, r1, r2, r3, r4, r5);
  if (run->fault == Fault::kNone)
    run->fault_pc = before;
  else if (run->fault_pc == kFaultPcUnset)
    run->fault_pc = pc;
  return r0;
}

bool knod_rt_tail_call(Run* run, uint64_t r1, void* fp, uint32_t depth, int32_t region,
                       uint64_t* r0) {
  if (run->tail_calls >= static_cast<uint32_t>(knod::kMaxTailCalls)) {
    run->tail_target = nullptr;
    return false;
  }
  ++run->tail_calls;
  *r0 = knod_host_tail_call(run, r1, fp, depth, region);
  return true;
}

uint64_t knod_rt_callx(Run* run, uint64_t target, uint64_t r1, uint64_t r2, uint64_t r3,
                       uint64_t r4, uint64_t r5, uint32_t pc) {
  if ((target & kFuncTagMask) == kFuncTag) {
    if (!run->call_func) {
      knod_rt_fault(run, static_cast<int32_t>(Fault::kBadHelper), pc);
      return 0;
    }
    return run->call_func(*run, target, r1, r2, r3, r4, r5);
  }
  return knod_rt_helper(run, static_cast<int32_t>(target), r1, r2, r3, r4, r5, pc);
}

}  // extern "C"
