// Encoding of isa::Instruction into instruction slots (RFC 9669 §3).
#include "isa/instruction.h"

namespace knod::isa {
namespace {

uint8_t size_field(uint8_t bytes) {
  switch (bytes) {
    case 1:
      return BPF_B;
    case 2:
      return BPF_H;
    case 4:
      return BPF_W;
    default:
      return BPF_DW;
  }
}

Insn make(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  Insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

struct Encoder {
  Insn* out;
  int operator()(const Alu& a) {
    uint8_t code = (a.is64 ? BPF_ALU64 : BPF_ALU) | a.op | (a.use_reg ? BPF_X : BPF_K);
    out[0] = make(code, a.dst, a.src, a.off, a.imm);
    return 1;
  }
  int operator()(const Neg& n) {
    out[0] = make((n.is64 ? BPF_ALU64 : BPF_ALU) | BPF_NEG, n.dst, 0, 0, 0);
    return 1;
  }
  int operator()(const Swap& s) {
    uint8_t code = s.kind == Swap::kBswap ? (BPF_ALU64 | BPF_END | BPF_TO_LE)
                   : s.kind == Swap::kBe  ? (BPF_ALU | BPF_END | BPF_TO_BE)
                                          : (BPF_ALU | BPF_END | BPF_TO_LE);
    out[0] = make(code, s.dst, 0, 0, s.width);
    return 1;
  }
  int operator()(const Load& l) {
    out[0] = make(BPF_LDX | (l.sign ? BPF_MEMSX : BPF_MEM) | size_field(l.size), l.dst, l.base,
                  l.off, 0);
    return 1;
  }
  int operator()(const Store& s) {
    uint8_t code = (s.use_reg ? BPF_STX : BPF_ST) | BPF_MEM | size_field(s.size);
    out[0] = make(code, s.base, s.src, s.off, s.imm);
    return 1;
  }
  int operator()(const Atomic& a) {
    out[0] = make(BPF_STX | BPF_ATOMIC | size_field(a.size), a.base, a.src, a.off, a.op);
    return 1;
  }
  int operator()(const LoadImm64& l) {
    out[0] = make(BPF_LD | BPF_IMM | BPF_DW, l.dst, l.src, 0, l.imm);
    out[1] = make(0, 0, 0, 0, l.imm2);
    return 2;
  }
  int operator()(const Jump& j) {
    uint8_t code = (j.is32 ? BPF_JMP32 : BPF_JMP) | j.op | (j.use_reg ? BPF_X : BPF_K);
    if (j.op == BPF_JA && j.is32)
      out[0] = make(code, j.dst, j.src, 0, j.off);
    else
      out[0] = make(code, j.dst, j.src, static_cast<int16_t>(j.off), j.imm);
    return 1;
  }
  int operator()(const Call& c) {
    switch (c.kind) {
      case Call::kReg:
        out[0] = make(BPF_JMP | BPF_CALL | BPF_X, c.reg, 0, 0, c.imm);
        break;
      case Call::kLocal:
        out[0] = make(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, c.imm);
        break;
      case Call::kKfunc:
        out[0] = make(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, c.imm);
        break;
      case Call::kHelper:
        out[0] = make(BPF_JMP | BPF_CALL, 0, 0, 0, c.imm);
        break;
    }
    return 1;
  }
  int operator()(const Exit&) {
    out[0] = make(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return 1;
  }
};

}  // namespace

int encode(const Instruction& ins, Insn out[2]) {
  return std::visit(Encoder{out}, ins);
}

}  // namespace knod::isa
