// Field checks of BPF_ALU / BPF_ALU64 (kernel check_alu_op; RFC 9669 §4.1, §4.2).
#include "verifier/checks.h"

namespace knod::verifier {

std::string check_alu(const Insn& i) {
  const uint8_t op = BPF_OP(i.code);
  const bool is64 = BPF_CLASS(i.code) == BPF_ALU64;
  const bool use_reg = BPF_SRC(i.code) == BPF_X;
  if (op > BPF_END) return "unknown ALU opcode";
  if (op == BPF_NEG) {
    if (use_reg || i.src_reg != 0 || i.off != 0 || i.imm != 0)
      return "BPF_NEG uses reserved fields";
    return check_dst_write(i.dst_reg);
  }
  if (op == BPF_END) {
    if (i.src_reg != 0 || i.off != 0 || (i.imm != 16 && i.imm != 32 && i.imm != 64) ||
        (is64 && use_reg))
      return "BPF_END uses reserved fields";
    return check_dst_write(i.dst_reg);
  }
  if (op == BPF_MOV) {
    if (use_reg) {
      if (i.imm != 0) return "BPF_MOV uses reserved fields";
      bool ok_off = i.off == 0 || i.off == 8 || i.off == 16 || (is64 && i.off == 32);
      if (!ok_off) return "BPF_MOV uses reserved fields";
      if (auto e = check_src(i.src_reg); !e.empty()) return e;
    } else if (i.src_reg != 0 || i.off != 0) {
      return "BPF_MOV uses reserved fields";
    }
    return check_dst_write(i.dst_reg);
  }
  const bool signed_ok = op == BPF_DIV || op == BPF_MOD;
  if (i.off != 0 && !(i.off == 1 && signed_ok)) return "BPF_ALU uses reserved fields";
  if (use_reg) {
    if (i.imm != 0) return "BPF_ALU uses reserved fields";
    if (auto e = check_src(i.src_reg); !e.empty()) return e;
  } else {
    if (i.src_reg != 0) return "BPF_ALU uses reserved fields";
    if (signed_ok && i.imm == 0) return "div by zero";
  }
  return check_dst_write(i.dst_reg);
}

}  // namespace knod::verifier
