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
  /// A run's native entry for a bound handle: fn(&run, r1, r2) returns r0 (unusable when
  /// run.fault is set afterwards). Follows tail calls, as run() does.
  using DirectFn = uint64_t (*)(Run* run, uint64_t r1, uint64_t r2);
  /// Optional faster path than run_bound() for a caller that runs one handle on one Run many
  /// times (a worker's packets): sets in `run` what every run of `handle` needs (the executor
  /// hooks: Run::executor, Run::call_func) and returns the entry to call directly, or nullptr
  /// (then use run_bound). Valid until the caller changes those hooks.
  virtual DirectFn direct(Run& run, const void* handle) {
    (void)run;
    (void)handle;
    return nullptr;
  }
  /// What a DirectFn entry runs once its stack is set up, for a caller that keeps its own:
  /// fn(&run, fp, r1, r2, r3, r4, r5, depth, region) returns r0, with `fp` the top of a
  /// kStackSize frame the caller registered as Region `region` of the run ([fp - kStackSize,
  /// fp), the kMaxCallDepth - 1 frames below it free for subprogram calls, which move the
  /// Region's low end and restore it) and `depth` 1. Valid with the hooks direct() set; nullptr
  /// when the executor has no such body (then call the DirectFn).
  using BodyFn = uint64_t (*)(Run* run, void* fp, uint64_t r1, uint64_t r2, uint64_t r3,
                              uint64_t r4, uint64_t r5, uint32_t depth, int32_t region);
  virtual BodyFn direct_body(const void* handle) {
    (void)handle;
    return nullptr;
  }
  /// A native loop over a run of packets with the body inlined into it, for a caller that
  /// keeps its stack as for direct_body: fn(state), `state` the caller's loop description
  /// (xdp::SlotLoop, xdp/slot_loop.h, for a program compiled for XDP). nullptr when the
  /// executor has none for `handle` (then loop over direct_body).
  using SlotsFn = void (*)(void* state);
  virtual SlotsFn direct_slots(const void* handle) {
    (void)handle;
    return nullptr;
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
