// The bpf_conformance suite (${KNOD_SHARED_DIR}/conformance/tests) through the GPU path on the
// host: each case runs through conformance::run_case (the runner every executor uses) with a
// gpu::BatchExecutor over the host-simulated GPU, i.e. lowered, linked with the GPU runtime,
// run as lane 0 of the batch kernel (Mode::kRaw: r1 = the case's memory, r2 = its length).
#include <gtest/gtest.h>

#include <filesystem>

#include "conformance/conformance.h"
#include "device/gpu/batch_executor.h"
#include "device/gpu/host_sim.h"

namespace knod::gpu_test {
namespace {

class HostSimConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(HostSimConformance, MatchesTheSuite) {
  conformance::ConformanceCase c = conformance::parse_data_file(GetParam());
  device::gpu::HostSim sim;
  device::gpu::BatchExecutor exec(sim);
  conformance::CaseOutcome out = conformance::run_case(c, exec);
  EXPECT_TRUE(out.passed) << c.name << ": " << out.message;
}

std::vector<std::string> files() {
  std::string dir = std::string(KNOD_SHARED_DIR) + "/conformance/tests";
  if (!std::filesystem::is_directory(dir)) return {"missing-conformance-suite"};
  return conformance::data_files(dir);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& i) {
  std::string s = std::filesystem::path(i.param).stem().string();
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Conformance, HostSimConformance, ::testing::ValuesIn(files()), test_name);

}  // namespace
}  // namespace knod::gpu_test
