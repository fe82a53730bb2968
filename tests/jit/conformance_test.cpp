// The bpf_conformance suite (${KNOD_SHARED_DIR}/conformance/tests, 313 files) through the
// JIT at -O0 and -O2: every case must give the expected r0 (or the expected load error).
#include "conformance/conformance.h"

#include <gtest/gtest.h>

#include "jit/executor.h"

namespace knod::jit {
namespace {

const std::vector<std::string>& suite() {
  static const std::vector<std::string> files =
      conformance::data_files(std::string(KNOD_SHARED_DIR) + "/conformance/tests");
  return files;
}

void run_suite(int opt_level) {
  ASSERT_EQ(suite().size(), 313u);
  JitOptions o;
  o.opt_level = opt_level;
  JitExecutor jit(o);
  int failed = 0;
  for (const std::string& path : suite()) {
    conformance::ConformanceCase c = conformance::parse_data_file(path);
    conformance::CaseOutcome out = conformance::run_case(c, jit);
    EXPECT_TRUE(out.passed) << c.name << ": " << out.message;
    failed += !out.passed;
  }
  EXPECT_EQ(failed, 0);
}

TEST(JitConformance, AllPassAtO0) {
  run_suite(0);
}
TEST(JitConformance, AllPassAtO2) {
  run_suite(2);
}

// Negative files must fail on the JIT too (rejected, or a result that does not match).
TEST(JitConformance, NegativeCasesFail) {
  JitExecutor jit;
  auto files = conformance::data_files(std::string(KNOD_SHARED_DIR) + "/conformance/negative");
  ASSERT_FALSE(files.empty());
  for (const std::string& path : files) {
    conformance::ConformanceCase c = conformance::parse_data_file(path);
    EXPECT_FALSE(conformance::run_case(c, jit).passed) << c.name;
  }
}

}  // namespace
}  // namespace knod::jit
