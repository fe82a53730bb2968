// knod ISA text: assembler and disassembler for the bpf_conformance assembly syntax
// (`mov %r0, 1`, `ldxw %r0, [%r1+4]`, `jeq %r1, 2, +3`, `lock fetch add [%r10-8], %r1`...).
// Syntax reference: bpf_conformance tests/*.data; semantics: RFC 9669.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "isa/insn.h"

namespace knod::isa {

/// Assembles program text, one instruction per line.
///   - `#` starts a comment (at the start of a word); blank lines are ignored.
///   - `name:` defines a label; jump targets are labels or signed slot offsets (`+3`, `-1`).
///     As in bpf_conformance, the label `exit` means the first `exit` instruction unless
///     defined explicitly.
///   - Immediates: decimal in [-2^31, 2^31) or hex up to 0xffffffff; `lddw` takes 64 bits.
///   - Offsets: decimal in [-32768, 32767] or hex up to 0xffff.
///   - `call N` / `call helper N` / `call name#N` (helper), `call local LABEL` (bpf-to-bpf),
///     `call %rN` (callx), `call runtime N` (kfunc).
///   - Load-acquire / store-release (kernel 6.15+; BPF_STX | BPF_ATOMIC, imm BPF_LOAD_ACQ
///     0x100 / BPF_STORE_REL 0x110): `ldacqw %r0, [%r1+4]` (r0 = *(u32 *)(r1 + 4)) and
///     `strelw [%r1+4], %r2`; sizes b, h, w, dw.
///   - knod extensions: `lddw %rN, map_idx(3)`, `map_idx_value(3)+8`, `map_fd(..)`,
///     `map_value(..)+off`, `btf_id(..)`, `func(+N)` set the ld_imm64 pseudo source
///     (linux/bpf.h BPF_PSEUDO_*), and `.insn 0xWORD` emits one raw 64-bit slot.
/// Throws knod::Error("line N: ...") on an unknown mnemonic, a bad register (valid: %r0..%r10),
/// an immediate or offset out of range, an undefined or duplicate label, a wrong operand count.
InsnVec assemble(std::string_view text);

/// Optional names for `disassemble`: helper ids and map indexes (ld_imm64 map_idx imm).
struct DisasmNames {
  std::function<std::string(int32_t helper_id)> helper;  ///< "" = unknown
  std::function<std::string(int32_t map_index)> map;     ///< "" = unknown
};

/// One line per instruction ("\n" terminated), in the syntax `assemble` reads, so
/// assemble(disassemble(p)) == p for every program. Jumps use signed offsets. A slot that is
/// not a canonical instruction (unknown opcode, nonzero reserved field) prints as `.insn 0x...`.
/// With `names`, helper calls print as `call bpf_map_lookup_elem#1` and map loads get a
/// `# name` comment.
std::string disassemble(const InsnVec& prog, const DisasmNames* names = nullptr);

/// One instruction (the slot at `pc`, and the next for ld_imm64) without newline.
std::string disassemble_one(const InsnVec& prog, size_t pc, const DisasmNames* names = nullptr);

/// Parses a bpf_conformance `-- raw` section: per line either one 64-bit word (`0x...`,
/// the little-endian struct bpf_insn read as an integer: opcode in the low byte) or 8
/// hex bytes in memory order (`07 00 01 00 01 00 00 00`). `#` comments allowed.
/// Throws knod::Error("line N: ...").
InsnVec parse_raw(std::string_view text);

/// An instruction slot as the 64-bit word of `-- raw` sections.
uint64_t insn_word(const Insn& i);
Insn insn_from_word(uint64_t w);

}  // namespace knod::isa
