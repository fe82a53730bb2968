// The host-simulated GPU (`--device gpusim`): exactly what the CUDA device runs (programs
// lowered by jit::lower, the GPU runtime runtime.c, the batch kernel knod_xdp_batch, the
// knod_gpu_args block and the map images of map_image.h), compiled for x86-64 through the
// same prepare_module path (Arch::kHostSim), JIT-compiled with LLVM ORC and run lane by lane
// on the calling thread: lane i = packet i, in index order (global_id() = i). It tests the
// GPU runtime's maps, helpers and batch semantics without a GPU; it is not meant to be fast.
#pragma once

#include <memory>

#include "device/gpu/batch_device.h"

namespace knod::device::gpu {

class HostSim : public BatchDevice {
 public:
  HostSim();
  ~HostSim() override;

  /// As BatchDevice::load; errors name the device "gpusim". Maps are uploaded (imaged) at
  /// each run() and written back after it, as on the CUDA device.
  void load(const vm::Env& env, size_t entry, Mode mode) override;
  void run(Batch& b) override;
  uint64_t run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) override;
  std::string_view name() const override { return "gpusim"; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace knod::device::gpu
