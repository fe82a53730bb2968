// JitExecutor: runs vm::Programs as native code for the host CPU (ORC LLJIT). Each program is
// lowered (jit/lower.h), linked with the runtime bitcode, optimised and compiled once, on its
// first run (or by compile()); later runs call the native function directly. Thread-safe:
// any number of threads may run programs at once (compiles are serialised).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "jit/lower.h"
#include "vm/executor.h"

namespace knod::jit {

struct JitOptions {
  int opt_level =
      2;  ///< 0, 1, 3: LLVM -O0/-O1/-O3; 2: knod's pipeline (jit/pipeline.h); codegen -O<n>
  CtxKind ctx = CtxKind::kOpaque;  ///< what r1 is; kXdp enables ctx/packet range analysis
  bool range_analysis = true;      ///< false: every memory access is checked at run time
  bool map_inline = true;          ///< type map lookups and inline ARRAY ones when the Env is known
  /// kXdp: programs bound as a Runtime's entry (bind) also get xdp::run_slot_loop with the
  /// body inlined (CompiledProgram::slots) when the optimised body is small enough
  /// (executor.cpp kSlotsBodyMax); their entry and standalone body then get -O0 machine code.
  /// false: never (e.g. `knod test-run`, which times the entry).
  bool slot_loop = true;
};

/// Native entry points of one compiled program.
struct CompiledProgram {
  using EntryFn = uint64_t (*)(vm::Run* run, uint64_t r1, uint64_t r2);
  using SubFn = vm::Executor::BodyFn;  ///< every subprogram's function, the body included
  EntryFn entry = nullptr;
  std::unordered_map<uint64_t, SubFn> subs;  ///< by entry pc (= BPF_PSEUDO_FUNC value)
  SubFn body = nullptr;                      ///< subs[0]: what a tail call to it runs
  /// xdp::run_slot_loop with the body inlined (CtxKind::kXdp programs only, else nullptr).
  vm::Executor::SlotsFn slots = nullptr;
  LowerStats stats;
  /// Lowering + optimisation + machine code, wall-clock ms. With the slot loop the entry's
  /// and the standalone body's machine code is made on their first call (split_off_entry,
  /// jit/slots.h), not in this figure.
  double compile_ms = 0;
  double compile_cpu_ms = 0;  ///< the same, CPU time of the compiling thread (ms): what the
                              ///< compile costs without other processes' share of the cores
  /// What Run::executor points at while this program runs: the executor (tail calls compile
  /// through it) and this program (bpf_loop callbacks find its subprograms).
  struct Hook {
    class JitExecutor* self = nullptr;
    const CompiledProgram* prog = nullptr;
  } hook;
};

class JitExecutor : public vm::Executor {
 public:
  explicit JitExecutor(JitOptions opts = {});
  ~JitExecutor() override;

  /// Compiles `prog` (cached by identity and env serial). With `env` (the Env of every run
  /// the code will serve) map lookups are typed and ARRAY lookups inlined (JitOptions).
  /// `slot_loop`: the program is an entry that runs batches (xdp::Runtime binds it), so also
  /// compile CompiledProgram::slots where JitOptions allow; a program compiled without it is
  /// compiled again when asked with it. Throws knod::Error if it cannot be lowered.
  const CompiledProgram& compile(const vm::Program& prog, const vm::Env* env = nullptr,
                                 bool slot_loop = false);
  /// vm::Executor: compiles on first use, follows tail calls (run.tail_target).
  uint64_t run(vm::Run& run, const vm::Program& prog, uint64_t r1, uint64_t r2) override;
  /// Runs an already compiled program (no lookup); tail calls still go through compile().
  uint64_t run_compiled(vm::Run& run, const CompiledProgram& cp, uint64_t r1, uint64_t r2);
  /// vm::Executor fast path: compiles `prog` (with its slot loop) and returns its
  /// CompiledProgram.
  const void* bind(const vm::Program& prog, const vm::Env* env = nullptr) override {
    return &compile(prog, env, true);
  }
  uint64_t run_bound(vm::Run& run, const vm::Program&, const void* handle, uint64_t r1,
                     uint64_t r2) override {
    return run_compiled(run, *static_cast<const CompiledProgram*>(handle), r1, r2);
  }
  /// vm::Executor fast path: Run::executor and call_func set once, the native entry called
  /// directly.
  DirectFn direct(vm::Run& run, const void* handle) override;
  /// The compiled program's body (CompiledProgram::body, the pc-0 function its entry calls).
  BodyFn direct_body(const void* handle) override;
  /// CompiledProgram::slots.
  SlotsFn direct_slots(const void* handle) override;
  const char* name() const override { return "jit"; }
  const JitOptions& options() const { return opts_; }

 private:
  struct Impl;
  JitOptions opts_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace knod::jit
