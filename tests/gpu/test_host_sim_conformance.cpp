// The bpf_conformance suite (${KNOD_SHARED_DIR}/conformance/tests) through the GPU path on the
// host: each case runs through conformance::run_case (the runner every executor uses) with a
// gpu::BatchExecutor over the host-simulated GPU, i.e. lowered, linked with the GPU runtime,
// run as lane 0 of the batch kernel (Mode::kRaw: r1 = the case's memory, r2 = its length).
#include <gtest/gtest.h>

#include <filesystem>

#include "conformance/conformance.h"
#include "conformance_params.h"
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

INSTANTIATE_TEST_SUITE_P(Conformance, HostSimConformance, ::testing::ValuesIn(suite_files()),
                         suite_test_name);

}  // namespace
}  // namespace knod::gpu_test
