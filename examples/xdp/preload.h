// Applies a <name>.maps.json preload (format: examples/xdp/README.md) to the kernel maps of
// a loaded libbpf object. Used by the kernel check; the reference for knod's own loader.
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <string>
#include <vector>

namespace knod::examples {

/// Writes every entry of `json_path` into the object's maps with bpf_map_update_elem.
/// Per-CPU maps get the one value on every possible CPU; PROG_ARRAY entries name a program
/// ("prog"); DEVMAP/DEVMAP_HASH values are replaced by `devmap_ifindex` when it is non-zero
/// (the example ifindexes do not exist on a test host). Throws std::runtime_error naming the
/// map and entry on an unknown map or program, a size mismatch or a kernel error.
/// Returns the number of entries written.
int preload_maps(bpf_object* obj, const std::string& json_path, uint32_t devmap_ifindex = 0);

}  // namespace knod::examples
