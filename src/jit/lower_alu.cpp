// ALU / ALU64 lowering (RFC 9669 §4.1, §4.2): 32-bit ops work on the low halves and
// zero-extend; shifts mask the count (& 31 / & 63); division by zero gives 0 and modulo by zero
// keeps dst; signed INT_MIN / -1 gives INT_MIN and INT_MIN % -1 gives 0 (no trap);
// MOVSX (off 8/16/32) sign-extends; END is to_le/to_be (ALU) or bswap (ALU64).
#include <llvm/IR/Intrinsics.h>

#include "jit/lower_impl.h"

namespace knod::jit {

using llvm::Value;

void Lowerer::lower_alu(const Insn& i, uint32_t pc) {
  bool is64 = insn_class(i) == BPF_ALU64;
  llvm::Type* ty = is64 ? b_.getInt64Ty() : b_.getInt32Ty();
  unsigned bits = is64 ? 64 : 32;
  uint8_t op = BPF_OP(i.code);
  auto widen = [&](Value* v) { return is64 ? v : b_.CreateZExt(v, b_.getInt64Ty()); };

  if (op == BPF_END) {
    if (i.imm != 16 && i.imm != 32 && i.imm != 64) bad(pc, "bad END width");
    llvm::Type* nty = b_.getIntNTy(unsigned(i.imm));
    Value* v = b_.CreateTrunc(get(i.dst_reg), nty);
    bool swap = is64 || BPF_SRC(i.code) == BPF_TO_BE;  // host and targets are little-endian
    if (swap && i.imm != 8) v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, v);
    return set(i.dst_reg, b_.CreateZExt(v, b_.getInt64Ty()));
  }

  Value* dst = is64 ? get(i.dst_reg) : get32(i.dst_reg);
  Value* src;
  if (BPF_SRC(i.code) == BPF_X)
    src = is64 ? get(i.src_reg) : get32(i.src_reg);
  else
    src = llvm::ConstantInt::get(ty, int64_t(i.imm), /*signed=*/true);

  auto zero = llvm::ConstantInt::get(ty, 0);
  auto minus1 = llvm::ConstantInt::getSigned(ty, -1);
  Value* r = nullptr;
  switch (op) {
    case BPF_ADD:
      r = b_.CreateAdd(dst, src);
      break;
    case BPF_SUB:
      r = b_.CreateSub(dst, src);
      break;
    case BPF_MUL:
      r = b_.CreateMul(dst, src);
      break;
    case BPF_OR:
      r = b_.CreateOr(dst, src);
      break;
    case BPF_AND:
      r = b_.CreateAnd(dst, src);
      break;
    case BPF_XOR:
      r = b_.CreateXor(dst, src);
      break;
    case BPF_NEG:
      r = b_.CreateNeg(dst);
      break;
    case BPF_LSH:
      r = b_.CreateShl(dst, b_.CreateAnd(src, bits - 1));
      break;
    case BPF_RSH:
      r = b_.CreateLShr(dst, b_.CreateAnd(src, bits - 1));
      break;
    case BPF_ARSH:
      r = b_.CreateAShr(dst, b_.CreateAnd(src, bits - 1));
      break;
    case BPF_DIV:
    case BPF_MOD: {
      if (i.off != 0 && i.off != 1) bad(pc, "bad div/mod offset");
      bool is_signed = i.off == 1, div = op == BPF_DIV;
      Value* is0 = b_.CreateICmpEQ(src, zero);
      // Divisor made safe for the LLVM instruction (no UB): 0 -> 1, and -1 -> 1 when signed.
      Value* bad_div = is0;
      Value* isneg1 = nullptr;
      if (is_signed) {
        isneg1 = b_.CreateICmpEQ(src, minus1);
        bad_div = b_.CreateOr(is0, isneg1);
      }
      Value* safe = b_.CreateSelect(bad_div, llvm::ConstantInt::get(ty, 1), src);
      Value* q = div ? (is_signed ? b_.CreateSDiv(dst, safe) : b_.CreateUDiv(dst, safe))
                     : (is_signed ? b_.CreateSRem(dst, safe) : b_.CreateURem(dst, safe));
      if (is_signed) q = b_.CreateSelect(isneg1, div ? b_.CreateNeg(dst) : zero, q);
      r = b_.CreateSelect(is0, div ? zero : dst, q);
      break;
    }
    case BPF_MOV:
      if (BPF_SRC(i.code) == BPF_X && i.off != 0) {
        if (i.off != 8 && i.off != 16 && (i.off != 32 || !is64)) bad(pc, "bad movsx width");
        Value* narrow = b_.CreateTrunc(get(i.src_reg), b_.getIntNTy(unsigned(i.off)));
        r = b_.CreateSExt(narrow, ty);
      } else {
        r = src;
      }
      break;
    default:
      bad(pc, "unknown ALU opcode");
  }
  set(i.dst_reg, widen(r));
}

}  // namespace knod::jit
