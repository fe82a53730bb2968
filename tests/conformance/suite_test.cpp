// The bpf_conformance suite on the reference interpreter: every tests/*.data must pass and
// every negative/*.data must fail (${KNOD_SHARED_DIR}/conformance).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include "conformance/conformance.h"
#include "vm/interp.h"

namespace knod::conformance {
namespace {

const std::string kDir = std::string(KNOD_SHARED_DIR) + "/conformance";

TEST(ConformanceSuite, EveryTestPassesOnInterpreter) {
  vm::Interpreter interp;
  auto files = data_files(kDir + "/tests");
  ASSERT_GE(files.size(), 313u) << "suite not found under " << kDir;
  int passed = 0, failed = 0;
  for (const auto& f : files) {
    CaseOutcome o = run_case(parse_data_file(f), interp);
    if (o.passed) {
      ++passed;
    } else {
      ++failed;
      ADD_FAILURE() << f << ": " << o.message;
    }
  }
  fmt::print("conformance tests: {} passed, {} failed\n", passed, failed);
  EXPECT_EQ(failed, 0);
}

TEST(ConformanceSuite, EveryNegativeFails) {
  vm::Interpreter interp;
  auto files = data_files(kDir + "/negative");
  ASSERT_GE(files.size(), 60u) << "negative suite not found under " << kDir;
  int failed_as_required = 0, wrongly_passed = 0;
  for (const auto& f : files) {
    ConformanceCase c = parse_data_file(f);
    CaseOutcome o = run_case(c, interp);
    if (o.passed) {
      ++wrongly_passed;
      ADD_FAILURE() << f << ": passed, but must fail";
      continue;
    }
    ++failed_as_required;
    // Where the failure must come from: unused fields are the verifier's (load) job, bad text
    // the assembler's.
    if (c.name.starts_with("unused-")) {
      EXPECT_EQ(o.stage, CaseOutcome::kLoad) << f << ": " << o.message;
    }
    if (c.name.starts_with("invalid_") || c.name.starts_with("empty")) {
      EXPECT_EQ(o.stage, CaseOutcome::kAssemble) << f << ": " << o.message;
    }
    if (c.name == "incorrect_return_value_high_bits.data" || c.name == "error.data") {
      EXPECT_EQ(o.stage, CaseOutcome::kRun) << f << ": " << o.message;
    }
  }
  fmt::print("conformance negatives: {} failed as required, {} wrongly passed\n",
             failed_as_required, wrongly_passed);
  EXPECT_EQ(wrongly_passed, 0);
}

}  // namespace
}  // namespace knod::conformance
