// The device map images of the CUDA device: device/gpu/map_image.h (shared with the
// host-simulated GPU), under their former cuda:: names.
#pragma once

#include "device/gpu/map_image.h"

namespace knod::device::cuda {
using gpu::build_map_image;
using gpu::gpu_key_hash;
using gpu::map_header;
using gpu::write_back_map_image;
}  // namespace knod::device::cuda
