// A vm::Executor that runs each program on a GPU BatchDevice (Mode::kRaw, one lane), so the
// executor-generic conformance runner (conformance/conformance.h run_case) drives the GPU
// path: the program is compiled for the device on every run() (the suite's programs are
// small), r1 must be 0 or the low end of one of the run's regions, r2 its length in bytes.
#pragma once

#include "device/gpu/batch_device.h"
#include "vm/executor.h"

namespace knod::device::gpu {

class BatchExecutor : public vm::Executor {
 public:
  explicit BatchExecutor(BatchDevice& dev) : dev_(dev) {}
  /// Loads {prog} with run.env's maps, runs it once; the memory at r1 is copied in and back.
  /// A compile error (unsupported helper...) throws knod::Error as the device's load() does.
  uint64_t run(vm::Run& run, const vm::Program& prog, uint64_t r1, uint64_t r2) override;
  const char* name() const override { return "gpu-batch"; }

 private:
  BatchDevice& dev_;
};

}  // namespace knod::device::gpu
