// Control flow of an eBPF program text: subprogram entries and basic-block leaders.
// Jumps are pc-relative to the next slot (RFC 9669 §4.3); `gotol` (JMP32|JA) uses imm.
// bpf-to-bpf calls are `call` with src_reg = BPF_PSEUDO_CALL, callbacks are ld_imm64 with
// src_reg = BPF_PSEUDO_FUNC; both target pc + imm + 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "isa/insn.h"

namespace knod::jit {

/// Sorted entry pcs of the subprograms (0 first). Throws knod::Error for a call target
/// outside the program.
std::vector<uint32_t> find_subprograms(const InsnVec& insns);

/// End (exclusive) of the subprogram starting at subs[i].
uint32_t subprogram_end(const std::vector<uint32_t>& subs, size_t i, size_t ninsns);

/// Jump target of a JMP/JMP32 branch at `pc`, if `i` is one (not call/exit).
std::optional<int64_t> jump_target(const Insn& i, uint32_t pc);

/// True for an instruction after which execution does not fall through (ja, gotol, exit).
bool ends_flow(const Insn& i);

/// Leaders in [lo, hi): lo, every jump target, and every pc after a jump or exit.
std::vector<bool> block_leaders(const InsnVec& insns, uint32_t lo, uint32_t hi);

}  // namespace knod::jit
