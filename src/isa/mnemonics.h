// knod ISA text: mnemonic tables shared by the assembler and the disassembler
// (bpf_conformance / ubpf assembly names for RFC 9669 opcodes).
#pragma once

#include <cstdint>
#include <string_view>

#include "isa/insn.h"

namespace knod::isa {

struct OpName {
  std::string_view name;
  uint8_t op;  ///< BPF_OP() value
};

/// Two-operand ALU ops (`add`, `add32`, ...). sdiv/smod are div/mod with off = 1.
inline constexpr OpName kAluOps[] = {
    {"add", BPF_ADD}, {"sub", BPF_SUB}, {"mul", BPF_MUL}, {"div", BPF_DIV},
    {"or", BPF_OR},   {"and", BPF_AND}, {"lsh", BPF_LSH}, {"rsh", BPF_RSH},
    {"mod", BPF_MOD}, {"xor", BPF_XOR}, {"mov", BPF_MOV}, {"arsh", BPF_ARSH},
};

/// Conditional jumps (`jeq`, `jeq32`, ...).
inline constexpr OpName kJmpOps[] = {
    {"jeq", BPF_JEQ}, {"jgt", BPF_JGT},   {"jge", BPF_JGE},   {"jset", BPF_JSET},
    {"jne", BPF_JNE}, {"jsgt", BPF_JSGT}, {"jsge", BPF_JSGE}, {"jlt", BPF_JLT},
    {"jle", BPF_JLE}, {"jslt", BPF_JSLT}, {"jsle", BPF_JSLE},
};

/// Atomic ops by their imm without BPF_FETCH (`lock add`, `lock fetch or32`...).
inline constexpr OpName kAtomicOps[] = {
    {"add", BPF_ADD},
    {"or", BPF_OR},
    {"and", BPF_AND},
    {"xor", BPF_XOR},
};

/// ld_imm64 pseudo sources (linux/bpf.h BPF_PSEUDO_*), written `kind(imm)+imm2`.
inline constexpr OpName kPseudoNames[] = {
    {"map_fd", BPF_PSEUDO_MAP_FD},   {"map_value", BPF_PSEUDO_MAP_VALUE},
    {"btf_id", BPF_PSEUDO_BTF_ID},   {"func", BPF_PSEUDO_FUNC},
    {"map_idx", BPF_PSEUDO_MAP_IDX}, {"map_idx_value", BPF_PSEUDO_MAP_IDX_VALUE},
};

/// Size suffix of loads/stores: b h w dw.
inline std::string_view size_suffix(uint8_t bytes) {
  switch (bytes) {
    case 1:
      return "b";
    case 2:
      return "h";
    case 4:
      return "w";
    default:
      return "dw";
  }
}

}  // namespace knod::isa
