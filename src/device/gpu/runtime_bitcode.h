// The GPU runtime (runtime.c) as bitcode, built at compile time by clang-19 and embedded.
#pragma once

#include <string_view>

#include "device/gpu/gpu_abi.h"

/// KNOD_GPU_HELPERS as `case` labels (codegen's load-time helper check).
#define KNOD_GPU_HELPERS_CASES KNOD_GPU_HELPERS(KNOD_CASE)

namespace knod::device::gpu {
std::string_view runtime_nvptx_bc();   ///< nvptx64-nvidia-cuda
std::string_view runtime_amdgcn_bc();  ///< amdgcn-amd-amdhsa (no -mcpu: set per module)
std::string_view runtime_host_bc();    ///< x86_64-pc-linux-gnu (host-simulated GPU)
}  // namespace knod::device::gpu
