// Why CUDA tests cannot run here ("" when a driver and a device are present): tests skip with
// "no CUDA driver: <reason>".
#pragma once

#include <string>

#include "device/cuda/devices.h"
#include "device/cuda/driver.h"

namespace knod::gpu_test {

inline std::string no_gpu_reason() {
  std::string why;
  if (!device::cuda::Driver::try_get(&why)) return why;
  if (device::cuda::list_devices().empty()) return "driver reports 0 CUDA devices";
  return "";
}

}  // namespace knod::gpu_test
