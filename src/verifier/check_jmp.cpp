// Field checks of BPF_JMP / BPF_JMP32 (kernel do_check: BPF_JA, BPF_CALL, BPF_EXIT and
// check_cond_jmp_op; RFC 9669 §4.3). Targets are checked in cfg.cpp.
#include "verifier/checks.h"

namespace knod::verifier {

std::string check_jmp(const Insn& i) {
  const uint8_t op = BPF_OP(i.code);
  const bool is32 = BPF_CLASS(i.code) == BPF_JMP32;
  const bool use_reg = BPF_SRC(i.code) == BPF_X;
  switch (op) {
    case BPF_JA:
      if (use_reg || i.src_reg != 0 || i.dst_reg != 0 || (!is32 && i.imm != 0) ||
          (is32 && i.off != 0))
        return "BPF_JA uses reserved fields";
      return "";
    case BPF_CALL:
      if (is32) return "unknown opcode (BPF_JMP32 | BPF_CALL)";
      if (use_reg) {  // callx: target in dst_reg (bpf_conformance / clang -mcpu=v4 encoding)
        if (i.src_reg != 0 || i.off != 0 || i.imm != 0) return "BPF_CALL uses reserved fields";
        return check_dst_read(i.dst_reg);
      }
      if (i.src_reg == BPF_PSEUDO_KFUNC_CALL) return "kernel function calls are not supported";
      if (i.off != 0 || i.dst_reg != 0 || (i.src_reg != 0 && i.src_reg != BPF_PSEUDO_CALL))
        return "BPF_CALL uses reserved fields";
      return "";
    case BPF_EXIT:
      if (is32) return "unknown opcode (BPF_JMP32 | BPF_EXIT)";
      if (use_reg || i.src_reg != 0 || i.dst_reg != 0 || i.off != 0 || i.imm != 0)
        return "BPF_EXIT uses reserved fields";
      return "";
    case BPF_JEQ:
    case BPF_JGT:
    case BPF_JGE:
    case BPF_JSET:
    case BPF_JNE:
    case BPF_JSGT:
    case BPF_JSGE:
    case BPF_JLT:
    case BPF_JLE:
    case BPF_JSLT:
    case BPF_JSLE:
      if (use_reg) {
        if (i.imm != 0) return "BPF_JMP/JMP32 uses reserved fields";
        if (auto e = check_src(i.src_reg); !e.empty()) return e;
      } else if (i.src_reg != 0) {
        return "BPF_JMP/JMP32 uses reserved fields";
      }
      return check_dst_read(i.dst_reg);
    default:
      return "unknown jump opcode";
  }
}

}  // namespace knod::verifier
