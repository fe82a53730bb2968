// Without an NVIDIA driver (KNOD_LIBCUDA points at a library that does not exist, so this
// holds on GPU machines too) knod says so in one line: `knod devices` lists "no GPU", opening
// a CUDA device fails with the driver error and a non-zero exit.
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.h"
#include "device/cuda/device.h"
#include "device/cuda/devices.h"
#include "device/cuda/driver.h"
#include "run_command.h"

namespace knod::gpu_test {
namespace {

constexpr const char* kMissing = "libcuda-knod-missing.so.1";

class NoDriver : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("KNOD_LIBCUDA", kMissing, 1); }
};

TEST_F(NoDriver, DriverLoadSaysWhy) {
  std::string why;
  EXPECT_EQ(device::cuda::Driver::try_get(&why), nullptr);
  EXPECT_EQ(why, "no NVIDIA driver (libcuda-knod-missing.so.1 not found)");
}

TEST_F(NoDriver, OpenThrowsTheDriverError) {
  try {
    device::cuda::Device::open("cuda:1");
    FAIL() << "opened a CUDA device without a driver";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no NVIDIA driver (libcuda-knod-missing.so.1 not found)");
  }
  EXPECT_THROW(device::cuda::list_devices(), Error);
}

TEST(CudaDeviceName, Parses) {
  EXPECT_EQ(device::cuda::parse_device_name("cuda"), 0);
  EXPECT_EQ(device::cuda::parse_device_name("cuda:0"), 0);
  EXPECT_EQ(device::cuda::parse_device_name("cuda:12"), 12);
  EXPECT_EQ(device::cuda::parse_device_name("cpu"), -1);
  EXPECT_THROW(device::cuda::parse_device_name("cuda:x"), Error);
  EXPECT_THROW(device::cuda::parse_device_name("cuda:"), Error);
  EXPECT_THROW(device::cuda::parse_device_name("cuda:-1"), Error);
}

TEST(CudaDeviceName, SmOfComputeCapability) {
  device::cuda::DeviceInfo h200;
  h200.cc_major = 9;
  EXPECT_EQ(device::cuda::sm_name(h200), "sm_90");
  device::cuda::DeviceInfo a100;
  a100.cc_major = 8;
  EXPECT_EQ(device::cuda::sm_name(a100), "sm_80");
  device::cuda::DeviceInfo b200;
  b200.cc_major = 10;
  EXPECT_EQ(device::cuda::sm_name(b200), "sm_90");  // sm_90 PTX, JIT-compiled by the driver
}

#ifdef KNOD_BIN
TEST(NoDriverCli, DevicesListsNoGpu) {
  std::string out;
  int rc = run_command(std::string("KNOD_LIBCUDA=") + kMissing + " " KNOD_BIN " devices", &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("cpu "), std::string::npos) << out;
  EXPECT_NE(out.find("cuda      no GPU (libcuda-knod-missing.so.1 not found)\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("gfx1030"), std::string::npos) << out;
}

TEST(NoDriverCli, DeviceCudaIsOneErrorLine) {
  std::string out;
  int rc = run_command(
      std::string("KNOD_LIBCUDA=") + kMissing + " " KNOD_BIN " devices --device cuda", &out);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "knod: no NVIDIA driver (libcuda-knod-missing.so.1 not found)\n");
}
#endif

}  // namespace
}  // namespace knod::gpu_test
