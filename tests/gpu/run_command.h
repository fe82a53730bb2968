// Runs a shell command for the GPU tests (ptxas, llvm-objdump, the knod CLI).
#pragma once

#include <string>

namespace knod::gpu_test {

/// Runs `cmd` through /bin/sh; returns the exit status and stdout+stderr in `out`.
int run_command(const std::string& cmd, std::string* out);

}  // namespace knod::gpu_test
