// knod verifier: the load-time checks the kernel verifier makes on a program's structure
// (kernel/bpf/verifier.c: check_subprogs, check_cfg, the reserved-field checks of
// check_alu_op / check_mem_access / do_check). Data-flow and range analysis are not done here:
// the executors bound every memory access at run time instead.
#pragma once

#include "isa/insn.h"

namespace knod::verifier {

/// Rejects, with knod::Error("insn N: ..."), a program the kernel would reject for its shape:
///   - empty, or longer than 1,000,000 slots (BPF_COMPLEXITY_LIMIT_INSNS);
///   - unknown opcode, nonzero reserved field (RFC 9669 §3: "unused fields ... must be zero"),
///     register above r10, a write to r10, division or modulo by immediate 0;
///   - ld_imm64 missing its second slot or with a bad second slot / pseudo source;
///   - jump or call target outside the program, into the 2nd slot of an ld_imm64, or out of its
///     subprogram; a subprogram whose last slot is not `exit` or `ja` (falls off the end);
///   - a slot no path from main or a subprogram start reaches ("unreachable insn");
///   - bpf-to-bpf recursion, or more than kMaxCallDepth frames on a call path;
///   - a direct frame-pointer access [r10 + off] outside the frame's kStackSize bytes
///     ("invalid write to stack R10 off=-520 size=8"), or more than kStackSize bytes of stack
///     over the frames of a call path ("combined stack size of 2 calls is 528. Too large";
///     each frame's depth is the lowest r10 offset it accesses directly, rounded up to 16).
/// Accepted beyond the kernel (for the RFC conformance suite): callx (`call %rN`) and
/// shift immediates >= the operand width (masked at run time, RFC 9669 §4.1).
void check_structure(const InsnVec& prog);

}  // namespace knod::verifier
