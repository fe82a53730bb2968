// The JIT runtime's inline part (see rt.h). Compiled with clang -emit-llvm to bitcode and
// linked into each lowered program; its functions are always_inline so their checks fold into
// the program's code. The out-of-line functions they call (slow paths, faults, helpers) are in
// rt_host.cpp, compiled once into knod. Semantics follow vm::Run (vm/abi.h) and the reference
// interpreter.
#include "jit/runtime/rt.h"

#include "maps/hash_view.h"
#include "maps/jhash.h"
#include "vm/abi.h"
#include "xdp/buff.h"
#include "xdp/slot_loop.h"

using knod::vm::Fault;
using knod::vm::Run;

#define KNOD_INLINE __attribute__((always_inline))

extern "C" {

// A checked access through a packet or map value pointer (jit/safety.h AccessInfo::off_stack):
// any region but the stack's (`stack`, the frames), so that it never writes a frame slot the
// range analysis tracks. knod_rt_check is the same with no region left out.
KNOD_INLINE bool knod_rt_check_off_stack(Run* run, uint64_t addr, uint32_t len, bool write,
                                         int32_t stack) {
  const knod::vm::Region& h = run->static_hint;  // map value pool matched last
  if (addr >= h.lo && len <= h.hi - h.lo && addr - h.lo <= h.hi - h.lo - len &&
      (!write || h.writable))
    return !h.stride || knod_rt_value_ok(&h, addr, len);
  return knod_rt_check_regions(run, addr, len, write, stack);
}

KNOD_INLINE bool knod_rt_check(Run* run, uint64_t addr, uint32_t len, bool write) {
  return knod_rt_check_off_stack(run, addr, len, write, -1);
}

// bpf_xdp_adjust_head (44) / bpf_xdp_adjust_meta (54) with r1 the ctx (jit/safety.h
// kXdpAdjust): the helpers' own work (xdp::Buff) called directly on the host
// (knod_host_xdp_adjust), without the helper table and its argument checks; out of line,
// because inlined it made the programs that use it ~10% slower to compile. A run without an
// xdp::Buff, or another r1, takes the helper (which faults kBadHelper as the interpreter does).
KNOD_INLINE uint64_t knod_rt_xdp_adjust(Run* run, int32_t id, uint64_t r1, uint64_t r2,
                                        uint32_t pc) {
  if (!run->ctx_fields || r1 != run->ctx_lo || run->prog_state != run->ctx_fields)
    return knod_rt_helper(run, id, r1, r2, 0, 0, 0, pc);
  return knod_host_xdp_adjust(run, id, r2);
}

// struct xdp_md (linux/bpf.h) read from the xdp::Buff as xdp::ctx_load does.
KNOD_INLINE uint64_t knod_rt_ctx_field(Run* run, uint32_t off) {
  const auto* b = static_cast<const knod::xdp::Buff*>(run->ctx_fields);
  switch (off) {
    case 0:
      return b->data;
    case 4:
      return b->data_end;
    case 8:
      return b->data_meta;
    case 12:
      return b->ingress_ifindex;
    case 16:
      return b->rx_queue_index;
    default:
      return b->egress_ifindex;  // 20 (knod_rt_ctx_ok)
  }
}

KNOD_INLINE bool knod_rt_ctx_ok(Run* run, uint32_t off, uint32_t size) {
  return run->ctx_fields && size == 4 && off <= 20 && off % 4 == 0;
}

KNOD_INLINE uint32_t knod_rt_cpu(Run* run) {
  return run->cpu;
}

KNOD_INLINE uint64_t knod_rt_hash_lookup(Run* run, const uint8_t* key, uint64_t head, uint64_t next,
                                         uint64_t hash, uint64_t keys, uint64_t values,
                                         uint64_t lru_ref, uint32_t key_size, uint32_t value_bytes,
                                         uint32_t mask, uint64_t cpu_block, uint32_t ncpus) {
  using knod::maps::HashView;
  const HashView v{reinterpret_cast<const uint32_t*>(head),
                   reinterpret_cast<const uint32_t*>(next),
                   reinterpret_cast<const uint32_t*>(hash),
                   reinterpret_cast<const uint8_t*>(keys),
                   reinterpret_cast<uint8_t*>(values),
                   key_size,
                   value_bytes,
                   mask};
  const uint32_t h = knod::maps::htab_hash(key, key_size, 0);  // maps/hash.cpp: seed 0
  const uint32_t e = knod::maps::hash_view_find(v, h, key, key_size);
  if (e == knod::maps::kHashNil) return 0;
  if (lru_ref) {  // bpf_lru_node_set_ref(): read first, write only when clear
    auto* ref = reinterpret_cast<uint8_t*>(lru_ref) + e;
    if (!__atomic_load_n(ref, __ATOMIC_RELAXED)) __atomic_store_n(ref, 1, __ATOMIC_RELAXED);
  }
  uint64_t p = values + uint64_t(e) * value_bytes;
  if (ncpus) {
    if (run->cpu >= ncpus) return 0;
    p += run->cpu * cpu_block;  // per-CPU values are CPU-major (maps/hash.h)
  }
  return p;
}

KNOD_INLINE bool knod_rt_stopped(Run* run) {
  return run->fault != Fault::kNone || run->exit_now;
}

KNOD_INLINE void knod_rt_fence_acquire() {
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

KNOD_INLINE void knod_rt_fence_release() {
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

KNOD_INLINE void knod_rt_set_caller(Run* run, uint32_t depth, void* fp, int32_t region) {
  run->call_depth = depth;
  run->call_fp = reinterpret_cast<uint64_t>(fp);
  run->call_region = region;
}

// After a helper called directly (LowerOptions::helpers) stopped the run: the fault's pc, as
// knod_rt_helper sets it.
KNOD_INLINE void knod_rt_fault_at(Run* run, uint32_t pc) {
  if (run->fault != Fault::kNone && (run->fault_pc == 0 || run->fault_pc == kFaultPcUnset))
    run->fault_pc = pc;
}

KNOD_INLINE bool knod_rt_tail_pending(Run* run) {
  return run->tail_target != nullptr;
}

KNOD_INLINE bool knod_rt_budget(Run* run, uint64_t n, uint32_t pc) {
  run->insns_executed += n;
  if (run->insns_executed <= run->insn_budget) return false;
  knod_rt_fault(run, static_cast<int32_t>(Fault::kInsnBudget), pc);
  return true;
}

KNOD_INLINE int32_t knod_rt_enter(Run* run, void* lo, uint32_t bytes) {
  uint64_t a = reinterpret_cast<uint64_t>(lo);
  int32_t saved = static_cast<int32_t>(run->nregions);
  if (run->add_region(a, a + bytes, true) < 0) return -1;
  return saved;
}

KNOD_INLINE uint8_t* knod_rt_stack(Run* run) {
  return run->stack;
}

KNOD_INLINE int32_t knod_rt_stack_region(Run* run) {
  return run->stack_region;
}

KNOD_INLINE void knod_rt_frame(Run* run, int32_t region, void* lo) {
  run->regions[region].lo = reinterpret_cast<uint64_t>(lo);
}

KNOD_INLINE void knod_rt_leave(Run* run, int32_t saved) {
  if (saved >= 0) run->nregions = static_cast<uint32_t>(saved);
}

// Not inline: the root the JIT keeps (renamed <program>_slots) for XDP programs, the body
// inlined into it there (jit/executor.cpp); other programs drop it.
void knod_rt_xdp_slots(void* state) {
  knod::xdp::run_slot_loop(*static_cast<knod::xdp::SlotLoop*>(state), knod_rt_body);
}

}  // extern "C"
