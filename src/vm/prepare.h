// knod program preparation: the load step between an object's program text and an executor.
#pragma once

#include <string>

#include "vm/abi.h"

namespace knod::vm {

/// Checks and links one program for `env` (kernel: bpf_check + resolve_pseudo_ldimm64):
///   - verifier::check_structure (knod::Error "insn N: ...");
///   - every helper call (BPF_CALL, src_reg 0) must name a helper of env.helpers
///     (knod::Error "unknown helper 123 (insn 45)"), and a HelperTable::gpl_only one only
///     when env.gpl_compatible (knod::Error "insn 45: helper 6 (bpf_trace_printk) is
///     GPL-only ...", the kernel's -EINVAL "cannot call GPL-restricted function");
///   - ld_imm64 BPF_PSEUDO_MAP_IDX (5) / BPF_PSEUDO_MAP_FD (1), imm = index into env.maps,
///     becomes the map's host pointer (maps::Map*), a plain constant (src_reg 0);
///   - ld_imm64 BPF_PSEUDO_MAP_IDX_VALUE (6) / BPF_PSEUDO_MAP_VALUE (2), imm = map index,
///     second imm = byte offset, becomes the address of that byte of the value of key 0
///     (error if the map has no such value or the offset is not below value_size);
///   - BPF_PSEUDO_FUNC is left for the executor; BPF_PSEUDO_BTF_ID is rejected.
Program prepare(std::string name, const InsnVec& insns, const Env& env);

/// Appends to env.static_regions one Region per value pool of env.maps (maps::Map::value_pools:
/// values of value_size bytes every stride bytes; writable unless Map::prog_readonly()).
void add_value_regions(Env& env);

}  // namespace knod::vm
