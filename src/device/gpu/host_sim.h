// The host-simulated GPU (`--device gpusim`): exactly what the CUDA device runs (programs
// lowered by jit::lower, the GPU runtime runtime.c, the batch kernel knod_xdp_batch, the
// knod_gpu_args block and the map images of map_image.h), compiled for x86-64 through the
// same prepare_module path (Arch::kHostSim), JIT-compiled with LLVM ORC and run lane by lane
// on the calling thread: lane i = packet i, in index order (global_id() = i). It tests the
// GPU runtime's maps, helpers and batch semantics without a GPU; it is not meant to be fast.
// Persistent sessions run the persistent kernel on host threads (see start_persistent).
#pragma once

#include <memory>

#include "device/gpu/batch_device.h"
#include "device/gpu/gpu_abi.h"

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

  /// Persistent session (BatchDevice): opts.blocks host threads (default 3) run the
  /// persistent kernel, one lane per simulated block, polling the mailbox in host memory.
  /// Lanes run directly on the submitted Batch's arrays (no copies). Packets run one at a time
  /// in submission order (batch by batch, index order), so a session gives exactly the CPU's
  /// packet-by-packet results; the ring (polling, block counters, DONE) runs concurrently.
  void start_persistent(const PersistentOptions& opts) override;
  uint64_t submit(Batch& b) override;
  std::optional<uint64_t> complete() override;
  void stop() override;
  bool persistent() const override;

 private:
  knod_gpu_args args_for(Batch& b, uint64_t* ret) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace knod::device::gpu
