// Host maps in the device layout (device/gpu/gpu_abi.h): built from a maps::Map before a
// batch, written back into it after. Pure host code, shared by the CUDA device and the
// host-simulated GPU (testable without a GPU).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "device/gpu/gpu_abi.h"
#include "maps/map.h"

namespace knod::device::gpu {

/// FNV-1a over the key bytes: where a HASH key starts probing (same as runtime.c).
uint32_t gpu_key_hash(const uint8_t* key, uint32_t n);

/// The image of `m` (header + arrays). Throws knod::Error
/// "map <name>: type N not supported on <device> yet" for types without a device layout.
std::vector<uint8_t> build_map_image(maps::Map& m, std::string_view device = "cuda");

/// Writes the values of `image` (as the device left it) back into `m`: ARRAY/PERCPU_ARRAY
/// values, HASH entries (updated, added and deleted). Other types are read-only on the device.
void write_back_map_image(maps::Map& m, const std::vector<uint8_t>& image);

/// Per-CPU slots of the per-CPU maps among `images` (the loader's ncpus), 0 when there are
/// none: the devices run packet i as virtual CPU i % this (bpf_get_smp_processor_id, per-CPU
/// slot), each virtual CPU on one lane with its packets in order (knod_gpu_args.ncpus).
uint32_t percpu_slots(const std::vector<std::vector<uint8_t>>& images);

/// Lanes to launch for `count` packets (knod_gpu_args.lanes): one per packet without per-CPU
/// maps (`ncpus` 0), else min(count, ncpus).
inline uint32_t lanes_for(uint32_t count, uint32_t ncpus) {
  return ncpus && ncpus < count ? ncpus : count;
}

inline const knod_gpu_map& map_header(const std::vector<uint8_t>& image) {
  return *reinterpret_cast<const knod_gpu_map*>(image.data());
}

}  // namespace knod::device::gpu
