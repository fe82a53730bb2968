// knod VM: the arithmetic and comparison semantics of RFC 9669 §4.1-§4.3, shared by the
// reference interpreter and constant folding (kernel edge cases noted per function).
#pragma once

#include <cstdint>
#include <optional>

#include "isa/insn.h"

namespace knod::vm {

/// Bytes of a BPF_SIZE field (BPF_B 1, BPF_H 2, BPF_W 4, BPF_DW 8).
inline uint32_t bpf_size_bytes(uint8_t code) {
  switch (BPF_SIZE(code)) {
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

/// The low `bits` bits of v, sign-extended to 64 bits (bits in 1..64).
inline uint64_t sign_extend(uint64_t v, unsigned bits) {
  if (bits >= 64) return v;
  const uint64_t m = uint64_t{1} << (bits - 1);
  v &= (m << 1) - 1;
  return (v ^ m) - m;
}

/// Applies the BPF_ALU / BPF_ALU64 instruction `i` to `dst` with operand `src` (the source
/// register's value, or the imm sign-extended to 64 bits). False for an opcode / off / imm that
/// is not an ALU instruction (then dst is unchanged).
///   - ALU32 computes on the low 32 bits and zero-extends the result;
///   - shifts use count & 63 (& 31 for ALU32);
///   - div by 0 = 0; mod by 0 leaves dst (ALU32: its low 32 bits, zero-extended);
///   - sdiv INT_MIN / -1 = INT_MIN, smod by -1 = 0 (kernel core.c);
///   - movsx (mov with off 8/16/32) sign-extends the low 8/16/32 bits of src;
///   - le/be/bswap per RFC 9669 §4.2 on a little-endian host.
bool alu(const Insn& i, uint64_t& dst, uint64_t src);

/// Whether conditional jump `op` (BPF_JEQ..BPF_JSLE) is taken for dst ? src, comparing the
/// low 32 bits when is32. nullopt for an op that is not a conditional jump.
std::optional<bool> jump_taken(uint8_t op, bool is32, uint64_t dst, uint64_t src);

}  // namespace knod::vm
