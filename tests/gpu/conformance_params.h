// The bpf_conformance suite (../shared/conformance/tests) as GoogleTest parameters, shared by
// the GPU conformance tests (code generation, host-simulated GPU, CUDA).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "conformance/conformance.h"

namespace knod::gpu_test {

/// Every .data file of the suite; one "missing-conformance-suite" entry (which fails) when
/// the directory is not there.
inline std::vector<std::string> suite_files() {
  std::string dir = std::string(KNOD_SHARED_DIR) + "/conformance/tests";
  if (!std::filesystem::is_directory(dir)) return {"missing-conformance-suite"};
  return conformance::data_files(dir);
}

/// Test name from a file path: its stem with non-alphanumerics as '_'.
inline std::string suite_test_name(const ::testing::TestParamInfo<std::string>& i) {
  std::string s = std::filesystem::path(i.param).stem().string();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

}  // namespace knod::gpu_test
