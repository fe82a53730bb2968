// A device that runs a whole device::Batch at once, one packet per GPU lane: the CUDA device
// (device/cuda/device.h) and the host-simulated GPU (device/gpu/host_sim.h). `knod run
// --device cuda|gpusim` and the GPU tests drive either through this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "device/batch.h"
#include "vm/abi.h"

namespace knod::device::gpu {

/// How r1 is set up for the programs (XDP: xdp_md; raw: conformance memory, r2 = length).
enum class Mode { kXdp, kRaw };

class BatchDevice {
 public:
  virtual ~BatchDevice() = default;

  /// Compiles env.programs (program i = tail-call index i) with env.programs[entry] as the
  /// entry and takes env.maps. Throws knod::Error for an unsupported helper or map type
  /// ("helper bpf_fib_lookup (69) not supported on cuda yet").
  virtual void load(const vm::Env& env, size_t entry, Mode mode) = 0;

  /// Runs every packet of `b` (frames, data_off, data_len, meta_len (null: 0),
  /// ingress_ifindex (null: 1), rx_queue_index (null: 0) in; verdict, redirect, fault, new
  /// data_off/data_len/meta_len out). The env's maps hold the device's state afterwards.
  /// Lane i runs as virtual CPU i % N, N = the per-CPU maps' slots (loader ncpus; 1 if none):
  /// its bpf_get_smp_processor_id and per-CPU map slot.
  virtual void run(Batch& b) = 0;

  /// Mode::kRaw: runs the entry once with r1 = a copy of `mem` (copied back; r1 = 0 when
  /// `mem` is empty), r2 = its length in bytes. Returns r0 (0 on a fault) and the fault.
  virtual uint64_t run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) = 0;

  /// "cuda", "gpusim": the device name in messages.
  virtual std::string_view name() const = 0;

 protected:
  /// For run_raw: runs `mem` as a one-packet batch (a slot of mem.size() + device::kTailroom
  /// bytes, rounded up to 256) and copies the bytes back; `fault` gets the lane's fault.
  void run_single(std::vector<uint8_t>& mem, vm::Fault* fault);
};

}  // namespace knod::device::gpu
