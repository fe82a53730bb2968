// Helpers for the VM tests: assemble + prepare + run on the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/asm.h"
#include "vm/conformance_helpers.h"
#include "vm/interp.h"
#include "vm/prepare.h"

namespace knod::vm::test {

struct Result {
  uint64_t r0 = 0;
  Fault fault = Fault::kNone;
  uint32_t fault_pc = 0;
  uint64_t insns = 0;
};

/// Runs `text` with r1 = a copy of `mem` (writable region), r2 = its length.
inline Result run_asm(const std::string& text, std::vector<uint8_t> mem = {},
                      uint64_t budget = 1'000'000, const HelperTable* helpers = nullptr) {
  Env env;
  env.helpers = helpers ? helpers : &conformance_helpers();
  Program p = prepare("test", isa::assemble(text), env);
  Run run;
  run.env = &env;
  run.insn_budget = budget;
  uint64_t r1 = 0;
  if (!mem.empty()) {
    r1 = reinterpret_cast<uint64_t>(mem.data());
    run.add_region(r1, r1 + mem.size(), true);
  }
  Interpreter interp;
  Result r;
  r.r0 = interp.run(run, p, r1, mem.size());
  r.fault = run.fault;
  r.fault_pc = run.fault_pc;
  r.insns = run.insns_executed;
  return r;
}

}  // namespace knod::vm::test
