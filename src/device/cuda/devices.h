// CUDA devices visible through the driver: enumeration and the `cuda[:N]` device names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace knod::device::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;                ///< cuDeviceGetName
  int sms = 0;                     ///< CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  int cc_major = 0, cc_minor = 0;  ///< compute capability (9.0 = H100/H200)
  uint64_t memory = 0;             ///< bytes (cuDeviceTotalMem)
};

/// Every CUDA device. Throws knod::Error "no NVIDIA driver (libcuda.so.1 not found)" when
/// the driver is missing.
std::vector<DeviceInfo> list_devices();

/// Parses "cuda" (= cuda:0) or "cuda:N"; returns N, or -1 when `spec` is not a cuda name.
/// Throws knod::Error for "cuda:x".
int parse_device_name(std::string_view spec);

/// The device `ordinal`, or throws knod::Error "no CUDA device N (found M)" (or the
/// driver error).
DeviceInfo open_device_info(int ordinal);

/// "sm_90" for compute capability 9.0: the PTX target knod compiles for on that device.
std::string sm_name(const DeviceInfo& d);

}  // namespace knod::device::cuda
