// The bpf_conformance suite (${KNOD_SHARED_DIR}/conformance/tests/*.data) as programs for the
// GPU back-end tests: each file's `-- asm` (or `-- raw`) program, `-- mem` bytes, `-- result`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/insn.h"

namespace knod::gpu_test {

struct ConformanceCase {
  std::string name;                ///< file stem, e.g. "add"
  InsnVec insns;                   ///< empty when the text does not assemble
  std::string assemble_error;      ///< why insns is empty
  std::vector<uint8_t> mem;        ///< `-- mem` bytes (r1 points at them, r2 = their length)
  std::optional<uint64_t> result;  ///< `-- result`, absent for tests expecting an error
};

/// Every *.data file of `dir`, sorted by name. Empty when the directory does not exist.
std::vector<std::string> conformance_files(const std::string& dir);
ConformanceCase load_conformance(const std::string& path);

/// Runs `cmd` through /bin/sh; returns the exit status and stdout+stderr in `out`.
int run_command(const std::string& cmd, std::string* out);

}  // namespace knod::gpu_test
