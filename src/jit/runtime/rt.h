// The JIT runtime ABI: functions lowered programs call (declared in IR by jit/lower). On the
// host the inline ones are defined in rt.cpp, compiled to bitcode at build time and linked
// into each program module so that they inline; the out-of-line ones (slow paths, faults,
// helper and tail calls) in rt_host.cpp, compiled once into knod and resolved as absolute
// symbols (jit/executor.cpp). Target-neutral: nothing here assumes a host address space; a
// target (cpu, nvptx64, amdgcn) supplies the knod_host_* functions the runtime calls back.
#pragma once

#include <cstdint>

namespace knod::vm {
struct Region;
struct Run;
}  // namespace knod::vm

extern "C" {
/// 1 when [addr, addr+len) lies in a Region of the run or of the env (writable if `write`).
/// Inlined: the run's static_hint, then the run regions; then env static regions through
/// knod_host_static_ok (which sets static_hint to the region it matched).
bool knod_rt_check(knod::vm::Run* run, uint64_t addr, uint32_t len, bool write);
/// knod_rt_check for an access through a packet or map value pointer (jit/safety.h
/// AccessInfo::off_stack): the run's Region `stack` (the frames) is left out.
bool knod_rt_check_off_stack(knod::vm::Run* run, uint64_t addr, uint32_t len, bool write,
                             int32_t stack);
/// Out of line parts of the checks: every region of the run but `skip` (-1: none), then the
/// env's static regions (knod_host_static_ok); and whether [addr, addr+len) lies inside one
/// value of the pool `h` (addr already inside h).
bool knod_rt_check_regions(knod::vm::Run* run, uint64_t addr, uint32_t len, bool write,
                           int32_t skip);
bool knod_rt_value_ok(const knod::vm::Region* h, uint64_t addr, uint32_t len);
/// Load of `size` (1, 2, 4, 8) bytes that knod_rt_check refused: ctx rewriting
/// (run.ctx_load) when addr is inside [ctx_lo, ctx_hi), else a fault (kOutOfBounds).
uint64_t knod_rt_load_slow(knod::vm::Run* run, uint64_t addr, uint32_t size, uint32_t pc);
/// Store counterpart of knod_rt_load_slow (run.ctx_store).
void knod_rt_store_slow(knod::vm::Run* run, uint64_t addr, uint32_t size, uint64_t value,
                        uint32_t pc);
/// Direct ctx access at a constant offset (program type known to the lowering): when
/// knod_rt_ctx_ok, the struct xdp_md field at `off` is a plain read of the run's xdp::Buff
/// (run.ctx_fields), knod_rt_ctx_field, which cannot fault; otherwise knod_rt_ctx_slow
/// (run.ctx_load, or a kCtxAccess fault), after which the program checks for a stop.
bool knod_rt_ctx_ok(knod::vm::Run* run, uint32_t off, uint32_t size);
uint64_t knod_rt_ctx_field(knod::vm::Run* run, uint32_t off);
uint64_t knod_rt_ctx_slow(knod::vm::Run* run, uint32_t off, uint32_t size, uint32_t pc);
/// bpf_xdp_adjust_head (id 44) or bpf_xdp_adjust_meta (54) on the run's xdp::Buff when r1 is
/// its ctx (xdp::Buff::adjust_head / adjust_meta: 0 or -errno); else the helper by id.
uint64_t knod_rt_xdp_adjust(knod::vm::Run* run, int32_t id, uint64_t r1, uint64_t r2, uint32_t pc);
/// run.cpu: the per-CPU map slot (inlined PERCPU_ARRAY lookups).
uint32_t knod_rt_cpu(knod::vm::Run* run);
/// bpf_map_lookup_elem on a HASH-family maps::HashMap, as HashMap::lookup: the value of
/// `key` (key_size bytes) or 0. head..values: the table (maps/hash_view.h); lru_ref: the LRU
/// reference bytes (set on a hit) or 0; ncpus > 0: a per-CPU map, CPU-major: run.cpu's value
/// is cpu_block bytes per CPU after CPU 0's (0 when run.cpu >= ncpus). Host executors only.
uint64_t knod_rt_hash_lookup(knod::vm::Run* run, const uint8_t* key, uint64_t head, uint64_t next,
                             uint64_t hash, uint64_t keys, uint64_t values, uint64_t lru_ref,
                             uint32_t key_size, uint32_t value_bytes, uint32_t mask,
                             uint64_t cpu_block, uint32_t ncpus);
/// Helper call by id (env->helpers); an unknown id faults with kBadHelper.
uint64_t knod_rt_helper(knod::vm::Run* run, int32_t id, uint64_t r1, uint64_t r2, uint64_t r3,
                        uint64_t r4, uint64_t r5, uint32_t pc);
/// Sets run.fault = reason and run.fault_pc = pc (first fault wins).
void knod_rt_fault(knod::vm::Run* run, int32_t reason, uint32_t pc);
/// True when the program must return at once: a fault or exit_now.
bool knod_rt_stopped(knod::vm::Run* run);
/// The fences of load-acquire (after the load) and store-release (before the store),
/// BPF_LOAD_ACQ / BPF_STORE_REL (kernel 6.15+): the target's own (the GPU runtime's differ).
void knod_rt_fence_acquire();
void knod_rt_fence_release();
/// Before a helper that runs callbacks, or a callx: the calling frame's depth (1 = entry),
/// frame pointer and stack region into run.call_depth / call_fp / call_region.
void knod_rt_set_caller(knod::vm::Run* run, uint32_t depth, void* fp, int32_t region);
/// After a helper called directly stopped the run: run.fault_pc = pc if a fault has none yet
/// (0: such a helper runs no BPF code; kFaultPcUnset: inside a callback).
void knod_rt_fault_at(knod::vm::Run* run, uint32_t pc);
/// run.fault_pc while knod_rt_helper runs a helper (no fault yet): a fault that leaves it so
/// was the helper's own, at the call's pc; one in a program the helper ran keeps that pc.
constexpr uint32_t kFaultPcUnset = UINT32_MAX;
/// True when a helper set run.tail_target.
bool knod_rt_tail_pending(knod::vm::Run* run);
/// After a helper set run.tail_target: runs the target in place of the current frame (r1
/// kept) and stores its r0 in *r0, returning true; false (tail_target cleared, execution
/// falls through) once kMaxTailCalls were taken.
bool knod_rt_tail_call(knod::vm::Run* run, uint64_t r1, void* fp, uint32_t depth, int32_t region,
                       uint64_t* r0);
/// callx: a BPF_PSEUDO_FUNC value (vm::kFuncTag | pc) calls that subprogram through
/// run.call_func; any other value calls the helper of that id.
uint64_t knod_rt_callx(knod::vm::Run* run, uint64_t target, uint64_t r1, uint64_t r2, uint64_t r3,
                       uint64_t r4, uint64_t r5, uint32_t pc);
/// Adds `n` executed instructions; true (and a kInsnBudget fault) when over run.insn_budget.
bool knod_rt_budget(knod::vm::Run* run, uint64_t n, uint32_t pc);
/// Registers the stack [lo, lo+bytes) as a writable region; returns the previous region
/// count, or -1 when the run has no free region slot.
int32_t knod_rt_enter(knod::vm::Run* run, void* lo, uint32_t bytes);
/// run.stack (nullptr: the entry allocates and registers a stack) and run.stack_region.
uint8_t* knod_rt_stack(knod::vm::Run* run);
int32_t knod_rt_stack_region(knod::vm::Run* run);
/// Sets the stack Region's low end (the deepest active frame's bottom).
void knod_rt_frame(knod::vm::Run* run, int32_t region, void* lo);
/// Drops the regions added since knod_rt_enter returned `saved`.
void knod_rt_leave(knod::vm::Run* run, int32_t saved);

/// The loop of xdp::run_slot_loop (xdp/slot_loop.h) over an xdp::SlotLoop `state`, calling
/// knod_rt_body per packet. jit::JitExecutor renames it to <program>_slots, makes the program's
/// body the callee and inlines it (vm::Executor::direct_slots); dropped for other programs.
void knod_rt_xdp_slots(void* state);
/// Stands for the program's body (the pc-0 function, vm::Executor::BodyFn's signature) in
/// the runtime bitcode; never defined, replaced at link time.
uint64_t knod_rt_body(knod::vm::Run* run, void* fp, uint64_t r1, uint64_t r2, uint64_t r3,
                      uint64_t r4, uint64_t r5, uint32_t depth, int32_t region);

/// Supplied by the target: env static regions check (map value pools).
bool knod_host_static_ok(knod::vm::Run* run, uint64_t addr, uint64_t len, bool write);
/// Supplied by the host target: maps::Map::lookup(key, run->cpu) of the map at `map` (a
/// MapDesc::host map, key proven by the range analysis); the value's address or 0.
uint64_t knod_host_map_lookup(knod::vm::Run* run, uint64_t map, const void* key);
/// Supplied by the host target: bpf_tail_call on the PROG_ARRAY at `map` (vm/tail_call.h):
/// when slot `index` names a program and kMaxTailCalls are not taken, runs it in place of the
/// current frame as knod_rt_tail_call does (r1 kept, `fp`, `depth`, `region`), stores its r0
/// in *r0 and returns true; else false (the call falls through, run.tail_target unset).
bool knod_host_tail_jump(knod::vm::Run* run, uint64_t map, uint64_t index, uint64_t r1, void* fp,
                         uint32_t depth, int32_t region, uint64_t* r0);
/// Host side of knod_rt_xdp_adjust: xdp::Buff::adjust_head (id 44) or adjust_meta (54) on the
/// run's Buff (run.ctx_fields, checked by the caller) by `offset` bytes; 0 or -errno.
uint64_t knod_host_xdp_adjust(knod::vm::Run* run, int32_t id, uint64_t offset);
/// Supplied by the target: runs run.tail_target's body (clearing tail_target) with r1 on the
/// frame `fp` at `depth` (see knod_rt_tail_call); returns its r0.
uint64_t knod_host_tail_call(knod::vm::Run* run, uint64_t r1, void* fp, uint32_t depth,
                             int32_t region);
}
