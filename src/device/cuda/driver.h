// The CUDA driver API, loaded at run time: libcuda.so.1 is opened with dlopen, so knod builds,
// links and runs on machines without an NVIDIA driver (cuda.h is used for its types only).
// Source: CUDA Driver API reference (docs.nvidia.com/cuda/cuda-driver-api).
#pragma once

#include <cuda.h>

#include <string>

namespace knod::device::cuda {

/// Entry points knod uses, resolved once from libcuda.so.1 (versioned names as cuda.h maps
/// them, e.g. cuMemAlloc → cuMemAlloc_v2).
struct Driver {
#define KNOD_CU_FN(name) decltype(&::name) name = nullptr;
#include "device/cuda/driver_fns.def"
#undef KNOD_CU_FN

  /// The loaded driver with cuInit(0) done. Throws knod::Error
  /// "no NVIDIA driver (libcuda.so.1 not found)" or "CUDA driver: cuInit failed: ...".
  static const Driver& get();
  /// nullptr when the driver cannot be loaded; `why` gets the reason (the same text get() throws).
  static const Driver* try_get(std::string* why);

  /// Throws knod::Error "CUDA <what>: <cuGetErrorString>" unless r == CUDA_SUCCESS.
  void check(CUresult r, const char* what) const;
  std::string error_string(CUresult r) const;
};

}  // namespace knod::device::cuda
