// knod conformance: runs bpf_conformance .data files (Alan-Jowett/bpf_conformance format) on
// any vm::Executor, so the interpreter, the JIT and the devices pass the same suite.
// Format: `-- asm` (assembly), `-- raw` (instruction words), `-- mem` (hex bytes; r1 points to
// a copy, r2 = its length), `-- result` (expected 64-bit r0), `-- error` (expected load error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/insn.h"
#include "vm/executor.h"

namespace knod::conformance {

struct ConformanceCase {
  std::string name;                     ///< file name without directory
  std::optional<std::string> asm_text;  ///< `-- asm`
  std::optional<std::string> raw_text;  ///< `-- raw`
  std::vector<uint8_t> mem;             ///< `-- mem`
  std::optional<uint64_t> result;       ///< `-- result`
  std::optional<std::string> error;     ///< `-- error` (text may be empty)
  std::string parse_error;              ///< bad `-- mem` / `-- result` text; the case fails
};

/// Parses .data text. Unknown sections (`-- c`, `-- no register offset`...) are ignored.
ConformanceCase parse_data(std::string_view text, std::string name);
/// Reads and parses a .data file; throws knod::Error if it cannot be read.
ConformanceCase parse_data_file(const std::string& path);

/// The program of a case: `-- asm` assembled if present, else `-- raw`. Throws knod::Error
/// (assembler errors, no program).
InsnVec case_program(const ConformanceCase& c);

struct CaseOutcome {
  enum Stage { kAssemble, kLoad, kRun } stage = kAssemble;  ///< where the case ended
  bool passed = false;
  uint64_t r0 = 0;
  vm::Fault fault = vm::Fault::kNone;
  std::string message;  ///< why it failed ("" when passed)
};

/// Runs a case like the bpf_conformance runner: assemble, load (vm::prepare with
/// vm::conformance_helpers()), run with r1 = memory, r2 = its length. Passes when r0 equals
/// `-- result`, or, with `-- error`, when loading fails with exactly that (non-empty) message.
/// An assembler error, a fault, or a load error without matching `-- error` fails.
CaseOutcome run_case(const ConformanceCase& c, vm::Executor& exec);

/// The *.data files of a directory, sorted.
std::vector<std::string> data_files(const std::string& dir);

}  // namespace knod::conformance
