// Calls (RFC 9669 §4.3.1): helper calls go to knod_rt_helper(run, id, r1..r5) (callx takes the
// id from a register), or on the host straight to the helper's function
// (LowerOptions::helpers); bpf-to-bpf calls (src_reg = BPF_PSEUDO_CALL) call the subprogram's
// LLVM function with a new 512-byte frame below the caller's (the stack Region grows to it), r6-r9
// being the caller's own allocas (callee-saved by construction). Depth beyond kMaxCallDepth faults
// kCallDepth. After any call the program returns at once when the run stopped (fault, exit_now,
// tail call). bpf_xdp_adjust_head / adjust_meta with the ctx in r1 become knod_rt_xdp_adjust,
// a direct call of xdp::Buff's own code (no helper dispatch). bpf_map_lookup_elem on an ARRAY /
// PERCPU_ARRAY map whose storage the lowering knows (MapDesc::values, host JIT only) is inlined as
// the kernel's array_map_gen_lookup does: index < max_entries ? values + (cpu * cpu_slots + index)
// * stride : NULL. On a HASH-family map it becomes knod_rt_hash_lookup with the table's arrays and
// key size as constants, which the linked runtime inlines: jhash and the key compare unrolled for
// that key size. Either way the key is on the stack or in packet bytes the range analysis proved
// below data_end.
#include <llvm/IR/MDBuilder.h>

#include "jit/lower_impl.h"

namespace knod::jit {

constexpr int32_t kTailCallHelper = 12;  // BPF_FUNC_tail_call: the one helper that sets tail_target

namespace {

/// Helpers that run BPF code (callbacks, and what those tail-call): a fault in it keeps its
/// own pc, which knod_rt_helper tells from a fault of the helper itself; called through it.
bool runs_programs(int32_t id) {
  return id == BPF_FUNC_for_each_map_elem || id == BPF_FUNC_timer_set_callback ||
         id == BPF_FUNC_find_vma || id == BPF_FUNC_loop || id == BPF_FUNC_user_ringbuf_drain;
}

}  // namespace

using llvm::BasicBlock;
using llvm::Value;

// After a helper: return on a fault or exit_now; on a pending tail call run the target in
// place of this frame and return its r0 (or fall through once kMaxTailCalls were taken).
void Lowerer::after_helper(Value* r0) {
  return_if_stopped(r0);
  BasicBlock* tail = new_block("tail");
  BasicBlock* cont = new_block("cont");
  b_.CreateCondBr(b_.CreateCall(rt_.tail_pending, {run_}), tail, cont,
                  llvm::MDBuilder(c_).createBranchWeights(1, 2000));
  b_.SetInsertPoint(tail);
  Value* taken = b_.CreateCall(rt_.tail_call, {run_, get(1), fp_, depth_, region_, tail_r0_});
  BasicBlock* out = new_block("tail.ret");
  b_.CreateCondBr(taken, out, cont);
  b_.SetInsertPoint(out);
  emit_return(b_.CreateLoad(b_.getInt64Ty(), tail_r0_));
  b_.SetInsertPoint(cont);
}

void Lowerer::lower_call(const Insn& i, uint32_t pc) {
  if (BPF_SRC(i.code) == BPF_X) {  // callx: helper id in a register (dst_reg, or imm if 0)
    int reg = i.dst_reg != 0 ? i.dst_reg : i.imm;
    if (reg < 0 || reg >= kNumRegs) bad(pc, "bad callx register");
    b_.CreateCall(rt_.set_caller, {run_, depth_, fp_, region_});  // a function: call_func
    Value* r0 =
        b_.CreateCall(rt_.callx, {run_, get(reg), get(1), get(2), get(3), get(4), get(5), c32(pc)});
    set(0, r0);
    return after_helper(r0);
  }
  if (i.src_reg == 0 && access_[pc].kind == AccessKind::kArrayLookup)
    return lower_array_lookup(access_[pc]);
  if (i.src_reg == 0 && access_[pc].kind == AccessKind::kHashLookup)
    return lower_hash_lookup(access_[pc]);
  if (i.src_reg == 0 && access_[pc].kind == AccessKind::kMapLookup)
    return lower_map_lookup(access_[pc]);
  if (i.src_reg == 0 && access_[pc].kind == AccessKind::kTailCall)
    return lower_tail_call(access_[pc]);
  if (i.src_reg == 0 && access_[pc].kind == AccessKind::kXdpAdjust)
    return lower_xdp_adjust(access_[pc], pc);
  if (i.src_reg == 0 && i.imm != kTailCallHelper && !runs_programs(i.imm) && opts_.helpers &&
      i.imm >= 0 && i.imm < vm::kMaxHelperId && opts_.helpers->fn[i.imm])
    return lower_direct_helper(uint32_t(i.imm), pc);
  if (i.src_reg == 0) {
    if (runs_programs(i.imm)) b_.CreateCall(rt_.set_caller, {run_, depth_, fp_, region_});
    Value* r0 = b_.CreateCall(
        rt_.helper, {run_, c32(uint32_t(i.imm)), get(1), get(2), get(3), get(4), get(5), c32(pc)});
    set(0, r0);
    if (i.imm != kTailCallHelper) return return_if_stopped(r0);  // only bpf_tail_call jumps
    return after_helper(r0);
  }
  if (i.src_reg != BPF_PSEUDO_CALL) return emit_fault(vm::Fault::kBadInsn, pc);  // kfuncs
  uint32_t target = uint32_t(int64_t(pc) + 1 + i.imm);
  llvm::Function* callee = fns_.at(target);
  fault_if(b_.CreateICmpSGE(depth_, c32(kMaxCallDepth)), vm::Fault::kCallDepth, pc);
  Value* fp = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), fp_, -kStackSize);
  auto* i8 = b_.getInt8Ty();
  b_.CreateCall(rt_.frame, {run_, region_, b_.CreateConstInBoundsGEP1_64(i8, fp, -kStackSize)});
  Value* r0 = b_.CreateCall(callee, {run_, fp, get(1), get(2), get(3), get(4), get(5),
                                     b_.CreateAdd(depth_, c32(1)), region_});
  b_.CreateCall(rt_.frame, {run_, region_, b_.CreateConstInBoundsGEP1_64(i8, fp_, -kStackSize)});
  set(0, r0);
  return_if_stopped(r0);
}

// The key of an inlined lookup: on the stack, or the proven packet bytes r2 points at.
Value* Lowerer::key_ptr(const AccessInfo& a) {
  return a.packet_key ? b_.CreateIntToPtr(get(2), b_.getPtrTy()) : stack_ptr(a.off);
}

void Lowerer::lower_array_lookup(const AccessInfo& a) {
  const MapDesc& d = opts_.maps.at(size_t(a.map));
  ++stats_.inlined_lookups;
  llvm::Type* i64 = b_.getInt64Ty();
  Value* idx =
      b_.CreateZExt(b_.CreateAlignedLoad(b_.getInt32Ty(), key_ptr(a), llvm::Align(1)), i64);
  Value* ok = b_.CreateICmpULT(idx, c64(d.max_entries));
  Value* elem = idx;
  if (d.ncpus > 1) {  // per-CPU: the run's slot (ArrayMap::at returns NULL for a bad cpu)
    auto cpu_fn = m_.getOrInsertFunction(
        "knod_rt_cpu", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false));
    Value* cpu = b_.CreateZExt(b_.CreateCall(cpu_fn, {run_}), i64);
    ok = b_.CreateAnd(ok, b_.CreateICmpULT(cpu, c64(d.ncpus)));
    elem = b_.CreateAdd(b_.CreateMul(cpu, c64(d.cpu_slots)), idx);
  }
  Value* ptr = b_.CreateAdd(c64(d.values), b_.CreateMul(elem, c64(d.stride)));
  set(0, b_.CreateSelect(ok, ptr, c64(0)));
}

void Lowerer::lower_hash_lookup(const AccessInfo& a) {
  const MapDesc& d = opts_.maps.at(size_t(a.map));
  ++stats_.inlined_lookups;
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  auto fn = m_.getOrInsertFunction(
      "knod_rt_hash_lookup", llvm::FunctionType::get(i64,
                                                     {b_.getPtrTy(), b_.getPtrTy(), i64, i64, i64,
                                                      i64, i64, i64, i32, i32, i32, i64, i32},
                                                     false));
  auto addr = [&](const void* p) { return c64(reinterpret_cast<uint64_t>(p)); };
  const maps::HashView& h = d.hash;
  set(0, b_.CreateCall(
             fn, {run_, key_ptr(a), addr(h.head), addr(h.next), addr(h.hash), addr(h.keys),
                  addr(h.values), c64(d.lru_ref), c32(d.key_size), c32(h.value_bytes), c32(h.mask),
                  c64(d.percpu ? d.cpu_block : 0), c32(d.percpu ? d.ncpus : 0)}));
}

// A helper of the host's table called directly (LowerOptions::helpers): what knod_rt_helper
// does for a known id, without its table lookup and id check. The helper's fault gets this
// call's pc (vm::Run::fault_pc) on the stopped path, as knod_rt_helper sets it (such a helper
// runs no BPF code, so a fault with fault_pc 0 is its own: runs_programs).
void Lowerer::lower_direct_helper(uint32_t id, uint32_t pc) {
  ++stats_.direct_helpers;
  llvm::Type* i64 = b_.getInt64Ty();
  auto* ty = llvm::FunctionType::get(i64, {b_.getPtrTy(), i64, i64, i64, i64, i64}, false);
  Value* fn =
      b_.CreateIntToPtr(c64(reinterpret_cast<uint64_t>(opts_.helpers->fn[id])), b_.getPtrTy());
  Value* r0 = b_.CreateCall(ty, fn, {run_, get(1), get(2), get(3), get(4), get(5)});
  set(0, r0);
  BasicBlock* out = new_block("stopped");
  BasicBlock* cont = new_block("cont");
  b_.CreateCondBr(b_.CreateCall(rt_.stopped, {run_}), out, cont,
                  llvm::MDBuilder(c_).createBranchWeights(1, 2000));
  b_.SetInsertPoint(out);
  auto fault_at = m_.getOrInsertFunction(
      "knod_rt_fault_at",
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt32Ty()}, false));
  b_.CreateCall(fault_at, {run_, c32(pc)});
  emit_return(r0);
  b_.SetInsertPoint(cont);
}

// bpf_tail_call on a PROG_ARRAY of this process with the ctx in r1: one call,
// knod_host_tail_jump, reads the slot (the helper's work without checking its arguments)
// and runs the target in place of this frame; its r0 is returned. When no target runs (empty
// slot, index out of range, kMaxTailCalls taken) execution falls through with r0 = 0, as
// after the helper; nothing there can fault.
void Lowerer::lower_tail_call(const AccessInfo& a) {
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* p = b_.getPtrTy();
  auto fn = m_.getOrInsertFunction(
      "knod_host_tail_jump",
      llvm::FunctionType::get(b_.getInt1Ty(),
                              {p, i64, i64, i64, p, b_.getInt32Ty(), b_.getInt32Ty(), p}, false));
  Value* taken = b_.CreateCall(fn, {run_, c64(opts_.maps.at(size_t(a.map)).addr), get(3), get(1),
                                    fp_, depth_, region_, tail_r0_});
  BasicBlock* out = new_block("tail.ret");
  BasicBlock* cont = new_block("cont");
  b_.CreateCondBr(taken, out, cont);
  b_.SetInsertPoint(out);
  emit_return(b_.CreateLoad(i64, tail_r0_));
  b_.SetInsertPoint(cont);
  set(0, c64(0));
}

// bpf_xdp_adjust_head / adjust_meta (helper id in a.off) with the ctx in r1: knod_rt_xdp_adjust.
void Lowerer::lower_xdp_adjust(const AccessInfo& a, uint32_t pc) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  auto fn = m_.getOrInsertFunction(
      "knod_rt_xdp_adjust",
      llvm::FunctionType::get(i64, {b_.getPtrTy(), i32, i64, i64, i32}, false));
  Value* r0 = b_.CreateCall(fn, {run_, c32(uint32_t(a.off)), get(1), get(2), c32(pc)});
  set(0, r0);
  return_if_stopped(r0);
}

// Any other map of this process with a proven key (e.g. LPM_TRIE): its lookup, called directly
// (what the helper does after validating the map and key pointers).
void Lowerer::lower_map_lookup(const AccessInfo& a) {
  const MapDesc& d = opts_.maps.at(size_t(a.map));
  auto fn = m_.getOrInsertFunction(
      "knod_host_map_lookup",
      llvm::FunctionType::get(b_.getInt64Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()},
                              false));
  set(0, b_.CreateCall(fn, {run_, c64(d.addr), key_ptr(a)}));
}

}  // namespace knod::jit
