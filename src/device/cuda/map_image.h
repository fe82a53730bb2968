// Host maps in the device layout (device/gpu/gpu_abi.h): built from a maps::Map before a
// batch, written back into it after. Pure host code (testable without a GPU).
#pragma once

#include <cstdint>
#include <vector>

#include "device/gpu/gpu_abi.h"
#include "maps/map.h"

namespace knod::device::cuda {

/// FNV-1a over the key bytes: where a HASH key starts probing (same as runtime.c).
uint32_t gpu_key_hash(const uint8_t* key, uint32_t n);

/// The image of `m` (header + arrays). Throws knod::Error
/// "map <name>: type N not supported on cuda yet" for types without a device layout.
std::vector<uint8_t> build_map_image(maps::Map& m);

/// Writes the values of `image` (as the device left it) back into `m`: ARRAY/PERCPU_ARRAY
/// values, HASH entries (updated, added and deleted). Other types are read-only on the device.
void write_back_map_image(maps::Map& m, const std::vector<uint8_t>& image);

inline const knod_gpu_map& map_header(const std::vector<uint8_t>& image) {
  return *reinterpret_cast<const knod_gpu_map*>(image.data());
}

}  // namespace knod::device::cuda
