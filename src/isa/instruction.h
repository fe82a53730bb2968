// knod ISA: one eBPF instruction decoded into C++ value types (PREVAIL style), so the
// assembler, the disassembler and the verifier talk about `Alu`, `Jump`, ... instead of bits.
// Source: RFC 9669 §3-§5 (encoding, arithmetic, jumps, load/store), linux/bpf.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "isa/insn.h"

namespace knod::isa {

/// Arithmetic: BPF_ALU/BPF_ALU64 with op BPF_ADD..BPF_ARSH except BPF_NEG and BPF_END.
/// `off` is 1 for sdiv/smod and 8/16/32 for movsx (RFC 9669 §4.1); 0 otherwise.
struct Alu {
  uint8_t op = BPF_ADD;  ///< BPF_OP() value (BPF_ADD, BPF_SUB, ... BPF_MOV, BPF_ARSH)
  bool is64 = true;
  uint8_t dst = 0;
  bool use_reg = false;  ///< BPF_X: operand is `src`; BPF_K: operand is `imm`
  uint8_t src = 0;
  int32_t imm = 0;
  int16_t off = 0;
};

/// BPF_NEG (RFC 9669 §4.1): dst = -dst.
struct Neg {
  bool is64 = true;
  uint8_t dst = 0;
};

/// Byte swaps (RFC 9669 §4.2): le/be (BPF_ALU|BPF_END|BPF_TO_LE/BE) and the v4 unconditional
/// bswap (BPF_ALU64|BPF_END|BPF_TO_LE). `width` is 16, 32 or 64 bits.
struct Swap {
  enum Kind : uint8_t { kLe, kBe, kBswap } kind = kLe;
  uint8_t dst = 0;
  int32_t width = 16;
};

/// BPF_LDX|BPF_MEM / BPF_MEMSX: dst = *(size *)(base + off), zero- or sign-extended.
struct Load {
  uint8_t size = 8;  ///< bytes: 1, 2, 4, 8
  bool sign = false;
  uint8_t dst = 0;
  uint8_t base = 0;
  int16_t off = 0;
};

/// BPF_ST|BPF_MEM (imm) and BPF_STX|BPF_MEM (register): *(size *)(base + off) = value.
struct Store {
  uint8_t size = 8;
  uint8_t base = 0;
  int16_t off = 0;
  bool use_reg = false;
  uint8_t src = 0;
  int32_t imm = 0;
};

/// BPF_STX|BPF_ATOMIC (RFC 9669 §5.3): `op` is the imm field (BPF_ADD.. | BPF_FETCH,
/// BPF_XCHG, BPF_CMPXCHG; kernel 6.15+ also BPF_LOAD_ACQ 0x100 / BPF_STORE_REL 0x110).
inline constexpr int32_t kLoadAcquire = 0x100;   ///< BPF_LOAD_ACQ: dst_reg = *(src_reg + off)
inline constexpr int32_t kStoreRelease = 0x110;  ///< BPF_STORE_REL: *(dst_reg + off) = src_reg
struct Atomic {
  uint8_t size = 8;
  uint8_t base = 0;  ///< dst_reg: the memory operand
  int16_t off = 0;
  uint8_t src = 0;
  int32_t op = BPF_ADD;
};

/// ld_imm64 (BPF_LD|BPF_IMM|BPF_DW, two slots). `src` is the pseudo kind (0 = plain
/// constant, BPF_PSEUDO_MAP_FD 1 ... BPF_PSEUDO_MAP_IDX_VALUE 6, linux/bpf.h).
struct LoadImm64 {
  uint8_t dst = 0;
  uint8_t src = 0;
  int32_t imm = 0;   ///< first slot imm (low 32 bits / map index / func offset)
  int32_t imm2 = 0;  ///< second slot imm (high 32 bits / map value offset)
  uint64_t value() const { return uint32_t(imm) | (uint64_t(uint32_t(imm2)) << 32); }
};

/// Jumps (RFC 9669 §4.3): BPF_JA (op 0, `off` from BPF_JMP's offset or BPF_JMP32's imm)
/// and conditional jumps. `off` is relative to the next instruction slot.
struct Jump {
  uint8_t op = BPF_JA;  ///< BPF_JA, BPF_JEQ, ... BPF_JSLE
  bool is32 = false;    ///< BPF_JMP32
  uint8_t dst = 0;
  bool use_reg = false;
  uint8_t src = 0;
  int32_t imm = 0;
  int32_t off = 0;
};

/// BPF_CALL: helper by id (src 0), local function (BPF_PSEUDO_CALL, imm pc-relative),
/// kfunc (BPF_PSEUDO_KFUNC_CALL), or callx (BPF_X, target in register dst).
struct Call {
  enum Kind : uint8_t { kHelper, kLocal, kKfunc, kReg } kind = kHelper;
  int32_t imm = 0;
  uint8_t reg = 0;
};

/// BPF_EXIT.
struct Exit {};

using Instruction = std::variant<Alu, Neg, Swap, Load, Store, Atomic, LoadImm64, Jump, Call, Exit>;

/// Decodes the instruction starting at slot `pc`. Returns nullopt for an opcode that is not
/// an eBPF instruction (or an ld_imm64 without its second slot). Decoding keeps every field
/// the type has; fields the type has no room for (e.g. `off` of BPF_EXIT) are dropped, so
/// use `encode(decode(x)) == x` to know whether a slot is canonical. `slots` gets 1 or 2.
std::optional<Instruction> decode(const Insn* prog, size_t n, size_t pc, int* slots = nullptr);

/// Encodes `ins` into out[0] (and out[1] for ld_imm64). Returns the number of slots (1 or 2).
int encode(const Instruction& ins, Insn out[2]);

/// Slots an instruction occupies (2 for LoadImm64).
inline int slots_of(const Instruction& ins) {
  return std::holds_alternative<LoadImm64>(ins) ? 2 : 1;
}

}  // namespace knod::isa
