// LD / LDX / ST / STX lowering (RFC 9669 §5): ld_imm64, loads (zero- or sign-extending,
// BPF_MEMSX), stores of a register or imm. Each access is either proven by the range analysis
// (jit/safety.h: stack at a constant r10 offset, packet bytes checked against data_end, map
// values after a NULL test), a ctx field at a known offset (knod_rt_ctx_field when
// knod_rt_ctx_ok, else knod_rt_ctx_slow), or guarded: knod_rt_check inline (through a packet
// or map value pointer knod_rt_check_off_stack: never the frame), with the slow path (ctx
// rewriting or a kOutOfBounds fault) in knod_rt_load_slow/knod_rt_store_slow.
#include <llvm/IR/MDBuilder.h>

#include "jit/lower_impl.h"

namespace knod::jit {

using llvm::BasicBlock;
using llvm::Value;

static unsigned size_bytes(const Insn& i) {
  switch (BPF_SIZE(i.code)) {
    case BPF_B:
      return 1;
    case BPF_H:
      return 2;
    case BPF_W:
      return 4;
    default:
      return 8;
  }
}

Value* Lowerer::stack_ptr(int32_t off) {
  return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), fp_, int64_t(off));
}

Value* Lowerer::check_access(const AccessInfo& a, Value* addr, unsigned size, bool write) {
  if (!a.off_stack) return b_.CreateCall(rt_.check, {run_, addr, c32(size), b_.getInt1(write)});
  auto fn = m_.getOrInsertFunction(
      "knod_rt_check_off_stack",
      llvm::FunctionType::get(
          b_.getInt1Ty(),
          {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getInt1Ty(), b_.getInt32Ty()},
          false));
  return b_.CreateCall(fn, {run_, addr, c32(size), b_.getInt1(write), region_});
}

void Lowerer::lower_lddw(const Insn& i, uint32_t pc) {
  if (!is_lddw(i)) bad(pc, "legacy LD_ABS/LD_IND (or unknown LD opcode) is not supported");
  if (pc + 1 >= hi_) bad(pc, "truncated ld_imm64");
  const Insn& next = insns_[pc + 1];
  uint64_t v = uint64_t(uint32_t(i.imm)) | (uint64_t(uint32_t(next.imm)) << 32);
  if (i.src_reg == BPF_PSEUDO_FUNC)
    v = kFuncTag | uint64_t(int64_t(pc) + 1 + i.imm);
  else if (i.src_reg != 0)
    bad(pc, "ld_imm64 with an unresolved src_reg (run vm::prepare)");
  set(i.dst_reg, c64(v));
}

void Lowerer::lower_load(const Insn& i, uint32_t pc) {
  uint8_t mode = BPF_MODE(i.code);
  if (mode != BPF_MEM && mode != BPF_MEMSX) bad(pc, "unknown LDX mode");
  unsigned size = size_bytes(i);
  bool sx = mode == BPF_MEMSX;
  if (sx && size == 8) bad(pc, "ldsx of 8 bytes");
  llvm::Type* nty = b_.getIntNTy(size * 8);
  llvm::Type* i64 = b_.getInt64Ty();
  auto ext = [&](Value* v) { return sx ? b_.CreateSExt(v, i64) : b_.CreateZExt(v, i64); };
  const AccessInfo& a = access_[pc];
  ++stats_.accesses;
  if (a.kind == AccessKind::kStack) {
    ++stats_.proven;
    return set(i.dst_reg, ext(b_.CreateAlignedLoad(nty, stack_ptr(a.off), llvm::Align(1))));
  }
  if (a.kind == AccessKind::kCtx) {
    ++stats_.ctx_direct;
    // A field read (knod_rt_ctx_ok) cannot fault: only the other path checks for a stop.
    Value* args[] = {run_, c32(uint32_t(a.off)), c32(size), c32(pc)};
    Value* ok = b_.CreateCall(rt_.ctx_ok, {run_, args[1], args[2]});
    BasicBlock *fast = new_block("ctx.fast"), *slow = new_block("ctx.slow"),
               *join = new_block("ctx.join");
    b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(c_).createBranchWeights(2000, 1));
    b_.SetInsertPoint(fast);
    Value* v1 = b_.CreateCall(rt_.ctx_field, {run_, args[1]});
    b_.CreateBr(join);
    b_.SetInsertPoint(slow);
    Value* v2 = b_.CreateCall(rt_.ctx_slow, args);
    return_if_stopped(c64(0));
    BasicBlock* slow_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* v = b_.CreatePHI(b_.getInt64Ty(), 2);
    v->addIncoming(v1, fast);
    v->addIncoming(v2, slow_end);
    return set(i.dst_reg, sx ? ext(b_.CreateTrunc(v, nty)) : v);
  }
  Value* addr = b_.CreateAdd(get(i.src_reg), c64(uint64_t(int64_t(i.off))));
  if (a.kind == AccessKind::kPacket || a.kind == AccessKind::kMapValue) {
    ++stats_.proven;
    if (a.kind == AccessKind::kMapValue) ++stats_.map_values;
    Value* p = b_.CreateIntToPtr(addr, b_.getPtrTy());
    return set(i.dst_reg, ext(b_.CreateAlignedLoad(nty, p, llvm::Align(1))));
  }
  ++stats_.checked;
  stats_.checked_pcs.push_back(pc);
  Value* ok = check_access(a, addr, size, false);
  BasicBlock *fast = new_block("ld.fast"), *slow = new_block("ld.slow"),
             *join = new_block("ld.join");
  b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(c_).createBranchWeights(2000, 1));
  b_.SetInsertPoint(fast);
  Value* v1 =
      ext(b_.CreateAlignedLoad(nty, b_.CreateIntToPtr(addr, b_.getPtrTy()), llvm::Align(1)));
  b_.CreateBr(join);
  b_.SetInsertPoint(slow);
  Value* v2 = b_.CreateCall(rt_.load_slow, {run_, addr, c32(size), c32(pc)});
  if (sx) v2 = ext(b_.CreateTrunc(v2, nty));
  return_if_stopped(c64(0));
  BasicBlock* slow_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(i64, 2);
  phi->addIncoming(v1, fast);
  phi->addIncoming(v2, slow_end);
  set(i.dst_reg, phi);
}

void Lowerer::lower_store(const Insn& i, uint32_t pc) {
  if (BPF_MODE(i.code) != BPF_MEM) bad(pc, "unknown ST/STX mode");
  unsigned size = size_bytes(i);
  llvm::Type* nty = b_.getIntNTy(size * 8);
  Value* v64 = insn_class(i) == BPF_ST ? c64(uint64_t(int64_t(i.imm))) : get(i.src_reg);
  Value* v = b_.CreateTrunc(v64, nty);
  const AccessInfo& a = access_[pc];
  ++stats_.accesses;
  if (a.kind == AccessKind::kStack) {
    ++stats_.proven;
    b_.CreateAlignedStore(v, stack_ptr(a.off), llvm::Align(1));
    return;
  }
  Value* addr = b_.CreateAdd(get(i.dst_reg), c64(uint64_t(int64_t(i.off))));
  if (a.kind == AccessKind::kPacket || a.kind == AccessKind::kMapValue) {
    ++stats_.proven;
    if (a.kind == AccessKind::kMapValue) ++stats_.map_values;
    b_.CreateAlignedStore(v, b_.CreateIntToPtr(addr, b_.getPtrTy()), llvm::Align(1));
    return;
  }
  ++stats_.checked;
  stats_.checked_pcs.push_back(pc);
  Value* ok = check_access(a, addr, size, true);
  BasicBlock *fast = new_block("st.fast"), *slow = new_block("st.slow"),
             *join = new_block("st.join");
  b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(c_).createBranchWeights(2000, 1));
  b_.SetInsertPoint(fast);
  b_.CreateAlignedStore(v, b_.CreateIntToPtr(addr, b_.getPtrTy()), llvm::Align(1));
  b_.CreateBr(join);
  b_.SetInsertPoint(slow);
  b_.CreateCall(rt_.store_slow,
                {run_, addr, c32(size), b_.CreateZExt(v, b_.getInt64Ty()), c32(pc)});
  return_if_stopped(c64(0));
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

}  // namespace knod::jit
