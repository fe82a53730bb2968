// Conformance programs run on a CUDA GPU (Mode::kRaw: r1 = the test's memory, r2 = its
// length) must return the suite's `-- result`. Skips without an NVIDIA driver or GPU.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "conformance.h"
#include "device/cuda/device.h"
#include "device/cuda/devices.h"
#include "device/cuda/driver.h"

namespace knod::gpu_test {
namespace {

std::string no_gpu_reason() {
  std::string why;
  if (!device::cuda::Driver::try_get(&why)) return why;
  if (device::cuda::list_devices().empty()) return "driver reports 0 CUDA devices";
  return "";
}

class CudaConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaConformance, MatchesTheSuite) {
  if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no CUDA driver: " << why;
  ConformanceCase c = load_conformance(GetParam());
  if (c.insns.empty() || !c.result) GTEST_SKIP() << "no program or no expected result";
  static std::unique_ptr<device::cuda::Device> dev = device::cuda::Device::open("cuda:0");
  vm::Program prog{c.name, c.insns};
  vm::Env env;
  env.programs.push_back(&prog);
  try {
    dev->load(env, 0, device::cuda::Mode::kRaw);
  } catch (const Error& e) {
    // Conformance helpers (the suite's own helper ids) have no GPU implementation.
    if (std::string(e.what()).find("not supported on cuda yet") == std::string::npos) throw;
    GTEST_SKIP() << e.what();
  }
  vm::Fault f = vm::Fault::kNone;
  uint64_t r0 = dev->run_raw(c.mem, &f);
  EXPECT_EQ(static_cast<int>(f), 0);
  EXPECT_EQ(r0, *c.result) << std::hex << "r0 0x" << r0 << " expected 0x" << *c.result;
}

std::vector<std::string> files() {
  auto v = conformance_files(std::string(KNOD_SHARED_DIR) + "/conformance/tests");
  if (v.empty()) v.push_back("missing-conformance-suite");
  return v;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& i) {
  std::string s = std::filesystem::path(i.param).stem().string();
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Conformance, CudaConformance, ::testing::ValuesIn(files()), test_name);

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
