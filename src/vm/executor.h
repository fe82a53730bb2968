// An executor runs a prepared Program for one Run: the reference interpreter (vm/interp) or
// native code from the JIT (jit/, device/cpu). GPU devices run whole batches instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "vm/abi.h"

namespace knod::vm {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs `prog` (which must belong to run.env) with r1, r2 as given (r1 = ctx for XDP;
  /// r1 = memory, r2 = its length for the conformance suite). Returns r0. On a fault the
  /// return value is 0 and run.fault / run.fault_pc say why and where. Follows tail calls.
  virtual uint64_t run(Run& run, const Program& prog, uint64_t r1, uint64_t r2) = 0;
  virtual const char* name() const = 0;

  /// Optional fast path for a caller that runs one Program many times (a program-type
  /// runtime, per packet): an opaque handle for `prog` (e.g. its compiled code), valid while
  /// this executor lives and `prog` lives unchanged; nullptr when the executor has none.
  /// May compile (and throw as run() would). Thread-safe. `env`, when given, is the Env of
  /// every run the handle will serve (its maps may be compiled in).
  virtual const void* bind(const Program& prog, const Env* env = nullptr) {
    (void)prog;
    (void)env;
    return nullptr;
  }
  /// run() with a handle bind(prog) returned (non-null): no per-call lookup of `prog`.
  virtual uint64_t run_bound(Run& run, const Program& prog, const void* handle, uint64_t r1,
                             uint64_t r2) {
    (void)handle;
    return this->run(run, prog, r1, r2);
  }
  /// Unique per executor object in this process, never reused (addresses are): the key for
  /// caching bind() handles.
  uint64_t serial() const { return serial_; }

 private:
  static uint64_t next_serial() {
    static std::atomic<uint64_t> n{0};
    return ++n;
  }
  uint64_t serial_ = next_serial();
};

}  // namespace knod::vm
