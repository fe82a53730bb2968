// JMP / JMP32 lowering (RFC 9669 §4.3): conditional branches compare 64-bit registers (JMP)
// or their low 32 bits (JMP32) against a register or the sign-extended imm; `ja` uses off,
// `gotol` (JMP32|JA) uses imm. Back-edges add the loop body's length to the run's
// instruction count so that an infinite loop faults with kInsnBudget instead of hanging.
#include "jit/cfg.h"
#include "jit/lower_impl.h"

namespace knod::jit {

using llvm::BasicBlock;
using llvm::CmpInst;
using llvm::Value;

static CmpInst::Predicate predicate(uint8_t op, bool& ok) {
  ok = true;
  switch (op) {
    case BPF_JEQ:
      return CmpInst::ICMP_EQ;
    case BPF_JNE:
      return CmpInst::ICMP_NE;
    case BPF_JGT:
      return CmpInst::ICMP_UGT;
    case BPF_JGE:
      return CmpInst::ICMP_UGE;
    case BPF_JLT:
      return CmpInst::ICMP_ULT;
    case BPF_JLE:
      return CmpInst::ICMP_ULE;
    case BPF_JSGT:
      return CmpInst::ICMP_SGT;
    case BPF_JSGE:
      return CmpInst::ICMP_SGE;
    case BPF_JSLT:
      return CmpInst::ICMP_SLT;
    case BPF_JSLE:
      return CmpInst::ICMP_SLE;
  }
  ok = false;
  return CmpInst::ICMP_EQ;
}

void Lowerer::lower_jmp(const Insn& i, uint32_t pc) {
  uint8_t op = BPF_OP(i.code);
  bool is64 = insn_class(i) == BPF_JMP;
  if (op == BPF_CALL) {
    if (!is64) bad(pc, "call in JMP32 class");
    return lower_call(i, pc);
  }
  if (op == BPF_EXIT) {
    if (!is64) bad(pc, "exit in JMP32 class");
    return emit_return(get(0));
  }
  int64_t target = *jump_target(i, pc);
  BasicBlock* dest = block_at(target);
  // A back-edge goes through a block that charges the loop to the instruction budget.
  if (target <= int64_t(pc)) {
    BasicBlock* charge = new_block("backedge");
    BasicBlock* here = b_.GetInsertBlock();
    b_.SetInsertPoint(charge);
    Value* over = b_.CreateCall(rt_.budget, {run_, c64(uint64_t(pc - target + 1)), c32(pc)});
    BasicBlock* stop = new_block("budget");
    b_.CreateCondBr(over, stop, dest);
    b_.SetInsertPoint(stop);
    emit_return(c64(0));
    b_.SetInsertPoint(here);
    dest = charge;
  }
  if (op == BPF_JA) {
    b_.CreateBr(dest);
    return;
  }
  if (op == BPF_JCOND) {  // may_goto: never taken here; loops are bounded by the budget
    b_.CreateBr(block_at(pc + 1));
    return;
  }
  Value* a = is64 ? get(i.dst_reg) : get32(i.dst_reg);
  Value* bv;
  if (BPF_SRC(i.code) == BPF_X)
    bv = is64 ? get(i.src_reg) : get32(i.src_reg);
  else
    bv = llvm::ConstantInt::get(a->getType(), int64_t(i.imm), true);
  Value* cond;
  if (op == BPF_JSET) {
    cond = b_.CreateICmpNE(b_.CreateAnd(a, bv), llvm::ConstantInt::get(a->getType(), 0));
  } else {
    bool ok;
    CmpInst::Predicate p = predicate(op, ok);
    if (!ok) bad(pc, "unknown jump opcode");
    cond = b_.CreateICmp(p, a, bv);
  }
  b_.CreateCondBr(cond, dest, block_at(pc + 1));
}

}  // namespace knod::jit
