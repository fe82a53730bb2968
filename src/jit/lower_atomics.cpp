// Atomic read-modify-write (RFC 9669 §5.3, STX|ATOMIC, W and DW): ADD/OR/AND/XOR with optional
// BPF_FETCH (old value into src_reg), XCHG and CMPXCHG (compare with r0, old value into r0).
// 32-bit forms zero-extend what they load. The address must be a writable region byte range
// (never ctx) and naturally aligned, else the run faults with kOutOfBounds.
#include "jit/lower_impl.h"

namespace knod::jit {

using llvm::AtomicOrdering;
using llvm::AtomicRMWInst;
using llvm::Value;

void Lowerer::lower_atomic(const Insn& i, uint32_t pc) {
  unsigned size = BPF_SIZE(i.code) == BPF_W ? 4 : BPF_SIZE(i.code) == BPF_DW ? 8 : 0;
  if (!size) bad(pc, "atomic of 1 or 2 bytes");
  llvm::Type* nty = b_.getIntNTy(size * 8);
  llvm::Type* i64 = b_.getInt64Ty();
  bool fetch = i.imm & BPF_FETCH;
  AtomicRMWInst::BinOp op;
  switch (i.imm) {
    case BPF_ADD:
    case BPF_ADD | BPF_FETCH:
      op = AtomicRMWInst::Add;
      break;
    case BPF_OR:
    case BPF_OR | BPF_FETCH:
      op = AtomicRMWInst::Or;
      break;
    case BPF_AND:
    case BPF_AND | BPF_FETCH:
      op = AtomicRMWInst::And;
      break;
    case BPF_XOR:
    case BPF_XOR | BPF_FETCH:
      op = AtomicRMWInst::Xor;
      break;
    case BPF_XCHG:
      op = AtomicRMWInst::Xchg;
      break;
    case BPF_CMPXCHG:
      op = AtomicRMWInst::BAD_BINOP;
      break;
    default:
      bad(pc, "unknown atomic operation");
  }
  ++stats_.accesses;
  const AccessInfo& a = access_[pc];
  Value* ptr;
  if (a.kind == AccessKind::kStack && a.off % int32_t(size) == 0) {
    ++stats_.proven;
    ptr = stack_ptr(a.off);
  } else if (a.kind == AccessKind::kMapValue) {  // in the value; alignment still checked
    ++stats_.proven;
    ++stats_.map_values;
    Value* addr = b_.CreateAdd(get(i.dst_reg), c64(uint64_t(int64_t(i.off))));
    fault_if(b_.CreateICmpNE(b_.CreateAnd(addr, size - 1), c64(0)), vm::Fault::kOutOfBounds, pc);
    ptr = b_.CreateIntToPtr(addr, b_.getPtrTy());
  } else {
    ++stats_.checked;
    stats_.checked_pcs.push_back(pc);
    Value* addr = b_.CreateAdd(get(i.dst_reg), c64(uint64_t(int64_t(i.off))));
    Value* ok = check_access(a, addr, size, true);
    Value* aligned = b_.CreateICmpEQ(b_.CreateAnd(addr, size - 1), c64(0));
    fault_if(b_.CreateNot(b_.CreateAnd(ok, aligned)), vm::Fault::kOutOfBounds, pc);
    ptr = b_.CreateIntToPtr(addr, b_.getPtrTy());
  }
  llvm::Align align(size);
  AtomicOrdering order = AtomicOrdering::SequentiallyConsistent;
  if (op == AtomicRMWInst::BAD_BINOP) {
    Value* expect = b_.CreateTrunc(get(0), nty);
    Value* repl = b_.CreateTrunc(get(i.src_reg), nty);
    Value* pair = b_.CreateAtomicCmpXchg(ptr, expect, repl, align, order, order);
    set(0, b_.CreateZExt(b_.CreateExtractValue(pair, 0), i64));
    return;
  }
  Value* old = b_.CreateAtomicRMW(op, ptr, b_.CreateTrunc(get(i.src_reg), nty), align,
                                  fetch ? order : AtomicOrdering::Monotonic);
  if (fetch) set(i.src_reg, b_.CreateZExt(old, i64));
}

}  // namespace knod::jit
