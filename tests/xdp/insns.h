// Building eBPF programs as instruction arrays in tests (the kernel's include/linux/filter.h
// BPF_* macros, as functions). Map references use BPF_PSEUDO_MAP_IDX (imm = map index).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "isa/insn.h"

namespace knod::xdp::test {

inline Insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  Insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}
inline Insn mov64_imm(int dst, int32_t imm) {
  return insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm);
}
inline Insn mov64_reg(int dst, int src) {
  return insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}
inline Insn alu64_imm(int op, int dst, int32_t imm) {
  return insn(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}
inline Insn alu64_reg(int op, int dst, int src) {
  return insn(BPF_ALU64 | op | BPF_X, dst, src, 0, 0);
}
inline Insn ldx(int size, int dst, int src, int16_t off) {
  return insn(BPF_LDX | size | BPF_MEM, dst, src, off, 0);
}
inline Insn stx(int size, int dst, int src, int16_t off) {
  return insn(BPF_STX | size | BPF_MEM, dst, src, off, 0);
}
inline Insn st(int size, int dst, int16_t off, int32_t imm) {
  return insn(BPF_ST | size | BPF_MEM, dst, 0, off, imm);
}
inline Insn jmp_imm(int op, int dst, int32_t imm, int16_t off) {
  return insn(BPF_JMP | op | BPF_K, dst, 0, off, imm);
}
inline Insn jmp_reg(int op, int dst, int src, int16_t off) {
  return insn(BPF_JMP | op | BPF_X, dst, src, off, 0);
}
inline Insn ja(int16_t off) {
  return insn(BPF_JMP | BPF_JA, 0, 0, off, 0);
}
inline Insn call(int helper) {
  return insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}
inline Insn exit_insn() {
  return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/// Appends ld_imm64 (two slots).
inline void ld_imm64(InsnVec& v, int dst, uint64_t imm, int src = 0) {
  v.push_back(insn(BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, int32_t(uint32_t(imm))));
  v.push_back(insn(0, 0, 0, 0, int32_t(uint32_t(imm >> 32))));
}
/// ld_imm64 dst = map #idx (BPF_PSEUDO_MAP_IDX).
inline void ld_map(InsnVec& v, int dst, int idx) {
  ld_imm64(v, dst, uint32_t(idx), BPF_PSEUDO_MAP_IDX);
}

inline InsnVec prog(std::initializer_list<Insn> l) {
  return InsnVec(l);
}
inline InsnVec& operator<<(InsnVec& v, const Insn& i) {
  v.push_back(i);
  return v;
}
inline InsnVec& operator<<(InsnVec& v, const InsnVec& w) {
  v.insert(v.end(), w.begin(), w.end());
  return v;
}

}  // namespace knod::xdp::test
