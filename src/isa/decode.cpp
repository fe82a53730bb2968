// Decoding of instruction slots into isa::Instruction (RFC 9669 §3, opcode tables in §4-§5).
#include "isa/instruction.h"

namespace knod::isa {
namespace {

uint8_t size_bytes(uint8_t size_field) {
  switch (size_field) {
    case BPF_B:
      return 1;
    case BPF_H:
      return 2;
    case BPF_W:
      return 4;
    default:
      return 8;  // BPF_DW
  }
}

std::optional<Instruction> decode_alu(const Insn& i) {
  const bool is64 = BPF_CLASS(i.code) == BPF_ALU64;
  const uint8_t op = BPF_OP(i.code);
  const bool use_reg = BPF_SRC(i.code) == BPF_X;
  switch (op) {
    case BPF_NEG:
      return Neg{is64, i.dst_reg};
    case BPF_END: {
      Swap::Kind kind = is64 ? Swap::kBswap : (use_reg ? Swap::kBe : Swap::kLe);
      return Swap{kind, i.dst_reg, i.imm};
    }
    case BPF_ADD:
    case BPF_SUB:
    case BPF_MUL:
    case BPF_DIV:
    case BPF_OR:
    case BPF_AND:
    case BPF_LSH:
    case BPF_RSH:
    case BPF_MOD:
    case BPF_XOR:
    case BPF_MOV:
    case BPF_ARSH:
      return Alu{op, is64, i.dst_reg, use_reg, i.src_reg, i.imm, i.off};
    default:
      return std::nullopt;
  }
}

std::optional<Instruction> decode_jmp(const Insn* prog, size_t pc) {
  const Insn& i = prog[pc];
  const bool is32 = BPF_CLASS(i.code) == BPF_JMP32;
  const uint8_t op = BPF_OP(i.code);
  const bool use_reg = BPF_SRC(i.code) == BPF_X;
  switch (op) {
    case BPF_JA:
      return Jump{
          BPF_JA, is32, i.dst_reg, use_reg, i.src_reg, is32 ? 0 : i.imm, is32 ? i.imm : i.off};
    case BPF_CALL:
      if (is32) return std::nullopt;
      if (use_reg) return Call{Call::kReg, i.imm, i.dst_reg};
      if (i.src_reg == BPF_PSEUDO_CALL) return Call{Call::kLocal, i.imm, 0};
      if (i.src_reg == BPF_PSEUDO_KFUNC_CALL) return Call{Call::kKfunc, i.imm, 0};
      return Call{Call::kHelper, i.imm, 0};
    case BPF_EXIT:
      if (is32) return std::nullopt;
      return Exit{};
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
      return Jump{op, is32, i.dst_reg, use_reg, i.src_reg, i.imm, i.off};
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Instruction> decode(const Insn* prog, size_t n, size_t pc, int* slots) {
  if (slots) *slots = 1;
  if (pc >= n) return std::nullopt;
  const Insn& i = prog[pc];
  const uint8_t mode = BPF_MODE(i.code);
  const uint8_t size = size_bytes(BPF_SIZE(i.code));
  switch (BPF_CLASS(i.code)) {
    case BPF_ALU:
    case BPF_ALU64:
      return decode_alu(i);
    case BPF_JMP:
    case BPF_JMP32:
      return decode_jmp(prog, pc);
    case BPF_LD:
      if (i.code != (BPF_LD | BPF_IMM | BPF_DW) || pc + 1 >= n) return std::nullopt;
      if (slots) *slots = 2;
      return LoadImm64{i.dst_reg, i.src_reg, i.imm, prog[pc + 1].imm};
    case BPF_LDX:
      if (mode != BPF_MEM && mode != BPF_MEMSX) return std::nullopt;
      return Load{size, mode == BPF_MEMSX, i.dst_reg, i.src_reg, i.off};
    case BPF_ST:
      if (mode != BPF_MEM) return std::nullopt;
      return Store{size, i.dst_reg, i.off, false, i.src_reg, i.imm};
    case BPF_STX:
      if (mode == BPF_MEM) return Store{size, i.dst_reg, i.off, true, i.src_reg, i.imm};
      if (mode == BPF_ATOMIC) return Atomic{size, i.dst_reg, i.off, i.src_reg, i.imm};
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace knod::isa
