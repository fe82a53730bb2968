// knod verifier internals: per-class field checks. Each returns "" when the slot is fine, or
// what is wrong with it (without the "insn N:" prefix).
#pragma once

#include <string>

#include "isa/insn.h"

namespace knod::verifier {

std::string check_alu(const Insn& i);  ///< BPF_ALU, BPF_ALU64
std::string check_mem(const Insn& i);  ///< BPF_LDX, BPF_ST, BPF_STX (incl. atomics)
std::string check_ld(const Insn* prog, size_t n, size_t pc);  ///< BPF_LD (ld_imm64 only)
std::string check_jmp(const Insn& i);  ///< BPF_JMP, BPF_JMP32 (ja, conditional, call, exit)

/// Register field checks shared by the classes.
inline std::string check_src(uint8_t r) {
  return r < kNumRegs ? "" : "invalid source register r" + std::to_string(r);
}
inline std::string check_dst_write(uint8_t r) {
  if (r >= kNumRegs) return "invalid destination register r" + std::to_string(r);
  if (r == 10) return "frame pointer r10 is read only";
  return "";
}
inline std::string check_dst_read(uint8_t r) {
  return r < kNumRegs ? "" : "invalid destination register r" + std::to_string(r);
}

}  // namespace knod::verifier
