// knod ISA: the eBPF instruction as stored in ELF objects and accepted by bpf(BPF_PROG_LOAD).
// Source: RFC 9669 (BPF Instruction Set Architecture), linux/bpf.h.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <vector>

// Opcodes newer than Debian 12's linux-libc-dev (6.1) headers (RFC 9669 "v4" additions).
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* load with sign extension (ldsx) */
#endif
#ifndef BPF_JCOND
#define BPF_JCOND 0xe0
#endif

namespace knod {

/// One 64-bit instruction slot, bit-identical to `struct bpf_insn` (linux/bpf.h, RFC 9669 §3).
/// `ld_imm64` (BPF_LD|BPF_IMM|BPF_DW) occupies two consecutive slots.
using Insn = bpf_insn;
static_assert(sizeof(Insn) == 8);

/// A straight sequence of instruction slots (a program text after linking).
using InsnVec = std::vector<Insn>;

constexpr int kNumRegs = 11;      ///< r0..r10 (RFC 9669 §2.1); r10 is the read-only frame pointer.
constexpr int kStackSize = 512;   ///< bytes of stack per frame (kernel MAX_BPF_STACK).
constexpr int kMaxCallDepth = 8;  ///< bpf-to-bpf frames (kernel MAX_CALL_FRAMES).
constexpr int kMaxTailCalls = 33;  ///< kernel MAX_TAIL_CALL_CNT.

inline uint8_t insn_class(const Insn& i) {
  return BPF_CLASS(i.code);
}
inline bool is_lddw(const Insn& i) {
  return i.code == (BPF_LD | BPF_IMM | BPF_DW);
}

}  // namespace knod
