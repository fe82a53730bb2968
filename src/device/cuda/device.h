// The CUDA device: runs a device::Batch of packets on an NVIDIA GPU, one packet per thread.
// Programs are lowered by jit::lower, compiled to PTX (device/cuda/ptx.h) and loaded by the
// driver's JIT. Maps live in device memory (device/gpu/gpu_abi.h layout) and are synced with
// the host maps before and after each batch, so host reads/updates between batches see the
// device's state. Frames and arrays go through pinned host staging; chunks of the batch
// alternate between two streams so copy-in, compute and copy-out overlap.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "device/batch.h"
#include "device/cuda/devices.h"
#include "device/gpu/batch_device.h"
#include "vm/abi.h"

namespace knod::device::cuda {

/// How r1 is set up for the programs (XDP: xdp_md; raw: conformance memory, r2 = length).
using Mode = gpu::Mode;

struct Timing {
  double total_ms = 0;   ///< first copy-in to last copy-out (cuEvent)
  double kernel_ms = 0;  ///< sum of kernel times of the chunks
};

class Device : public gpu::BatchDevice {
 public:
  /// Opens "cuda" or "cuda:N": loads the driver, retains the primary context. Throws
  /// knod::Error "no NVIDIA driver (libcuda.so.1 not found)" or "no CUDA device N (found M)".
  static std::unique_ptr<Device> open(std::string_view spec);
  ~Device() override;

  const DeviceInfo& info() const { return info_; }

  /// Compiles env.programs for this GPU (program i = tail-call index i) with env.programs[entry]
  /// as the entry, and uploads env.maps. Throws knod::Error for an unsupported helper or map
  /// type ("helper bpf_fib_lookup (69) not supported on cuda yet").
  void load(const vm::Env& env, size_t entry, Mode mode) override;

  /// Runs every packet of `b` (frames, lengths, ifindex in; verdict, redirect, fault, new
  /// offsets out). Host maps are uploaded before and written back after.
  void run(Batch& b) override;

  /// Device-resident run for benchmarks: the batch already in device memory is run again,
  /// without copies or map sync. Needs a previous run() of at least `count` packets.
  void run_resident(uint32_t count);

  /// Conformance (Mode::kRaw): runs the program once with r1 = `mem` (copied back), r2 = its
  /// length; returns r0 and the fault (vm::Fault::kNone when it ran to exit).
  uint64_t run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) override;
  std::string_view name() const override { return "cuda"; }

  /// Persistent session (gpu::BatchDevice): the persistent kernel on its own stream with
  /// opts.blocks blocks of 256 threads (default: one per SM; more than can be resident at
  /// once, SMs x occupancy, is an error, as blocks would wait forever). The mailbox and one batch
  /// staging area per ring slot (max_batch packets of `stride` bytes) are mapped pinned host
  /// memory (cuMemHostAlloc DEVICEMAP|PORTABLE): submit() copies the batch there and posts it,
  /// the kernel reads and writes it over the bus, complete() copies the results back. Maps
  /// are uploaded at start and written back at stop(). Errors: knod::Error (driver errors,
  /// "cuda: the persistent kernel ended before EXIT").
  void start_persistent(const gpu::PersistentOptions& opts) override;
  uint64_t submit(Batch& b) override;
  std::optional<uint64_t> complete() override;
  void stop() override;
  bool persistent() const override;

  const Timing& last_timing() const { return timing_; }

 private:
  struct Impl;
  explicit Device(const DeviceInfo& info);
  DeviceInfo info_;
  std::unique_ptr<Impl> impl_;
  Timing timing_;
};

}  // namespace knod::device::cuda
