// CUDA device enumeration through the dlopen'ed driver.
#include "device/cuda/devices.h"

#include <fmt/core.h>

#include <charconv>

#include "base/error.h"
#include "device/cuda/driver.h"

namespace knod::device::cuda {
namespace {

DeviceInfo query(const Driver& d, int ordinal) {
  CUdevice dev;
  d.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  info.name = name;
  d.check(d.cuDeviceGetAttribute(&info.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
          "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
          "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
          "cuDeviceGetAttribute");
  size_t mem = 0;
  d.check(d.cuDeviceTotalMem(&mem, dev), "cuDeviceTotalMem");
  info.memory = mem;
  return info;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  const Driver& d = Driver::get();
  int n = 0;
  d.check(d.cuDeviceGetCount(&n), "cuDeviceGetCount");
  std::vector<DeviceInfo> out;
  for (int i = 0; i < n; ++i) out.push_back(query(d, i));
  return out;
}

int parse_device_name(std::string_view spec) {
  if (spec == "cuda") return 0;
  if (!spec.starts_with("cuda:")) return -1;
  std::string_view num = spec.substr(5);
  int n = -1;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
  if (num.empty() || ec != std::errc() || p != num.data() + num.size() || n < 0)
    throw Error(fmt::format("bad CUDA device name '{}' (expected cuda or cuda:N)", spec));
  return n;
}

DeviceInfo open_device_info(int ordinal) {
  const Driver& d = Driver::get();
  int n = 0;
  d.check(d.cuDeviceGetCount(&n), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= n)
    throw Error(fmt::format("no CUDA device {} (found {})", ordinal, n));
  return query(d, ordinal);
}

std::string sm_name(const DeviceInfo& d) {
  // The NVPTX back end knows sm_50..sm_90; newer GPUs run sm_90 PTX through the driver JIT.
  int cc = d.cc_major * 10 + d.cc_minor;
  if (cc >= 90) return "sm_90";
  return fmt::format("sm_{}", cc);
}

}  // namespace knod::device::cuda
