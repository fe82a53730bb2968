// MapDesc lists (jit/lower.h) from a vm::Env: what the lowering may assume about the maps a
// program's ld_imm64 values name.
#pragma once

#include <vector>

#include "jit/lower.h"
#include "vm/abi.h"

namespace knod::jit {

/// One MapDesc per env.maps entry. Values are typed (bpf_map_lookup_elem gives value_size
/// bytes or NULL) for ARRAY, PERCPU_ARRAY, HASH, PERCPU_HASH, LRU_HASH, LRU_PERCPU_HASH and
/// LPM_TRIE, as kernel/bpf/verifier.c types them PTR_TO_MAP_VALUE_OR_NULL. With `inline_arrays`
/// (a host executor: the addresses are this process's), ARRAY and PERCPU_ARRAY maps also get
/// their storage layout (MapDesc::values) and the HASH family its table (MapDesc::hash), so
/// that lookups can be inlined, and every map is marked MapDesc::host (its lookup may be called
/// directly).
std::vector<MapDesc> describe_maps(const vm::Env& env, bool inline_arrays);

}  // namespace knod::jit
