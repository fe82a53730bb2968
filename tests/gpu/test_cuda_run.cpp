// The conformance suite on a CUDA GPU: conformance::run_case (the runner every executor uses)
// with a gpu::BatchExecutor over cuda::Device (Mode::kRaw: r1 = the test's memory, r2 = its
// length). Skips without an NVIDIA driver or GPU.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "conformance/conformance.h"
#include "conformance_params.h"
#include "cuda_skip.h"
#include "device/cuda/device.h"
#include "device/cuda/devices.h"
#include "device/cuda/driver.h"
#include "device/gpu/batch_executor.h"

namespace knod::gpu_test {
namespace {

class CudaConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaConformance, MatchesTheSuite) {
  if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no CUDA driver: " << why;
  conformance::ConformanceCase c = conformance::parse_data_file(GetParam());
  static std::unique_ptr<device::cuda::Device> dev = device::cuda::Device::open("cuda:0");
  device::gpu::BatchExecutor exec(*dev);
  conformance::CaseOutcome out = conformance::run_case(c, exec);
  EXPECT_TRUE(out.passed) << c.name << ": " << out.message;
}

INSTANTIATE_TEST_SUITE_P(Conformance, CudaConformance, ::testing::ValuesIn(suite_files()),
                         suite_test_name);

// With a GPU: a device number past the last one is a clear error.
TEST(CudaDevice, MissingOrdinalIsAnError) {
  if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no CUDA driver: " << why;
  int n = int(device::cuda::list_devices().size());
  try {
    device::cuda::Device::open("cuda:" + std::to_string(n));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no CUDA device " + std::to_string(n) + " (found " + std::to_string(n) + ")");
  }
}

}  // namespace
}  // namespace knod::gpu_test
