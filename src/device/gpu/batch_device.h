// A device that runs a whole device::Batch at once, one packet per GPU lane: the CUDA device
// (device/cuda/device.h) and the host-simulated GPU (device/gpu/host_sim.h). `knod run
// --device cuda|gpusim` and the GPU tests drive either through this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "device/batch.h"
#include "vm/abi.h"

namespace knod::device::gpu {

/// How r1 is set up for the programs (XDP: xdp_md; raw: conformance memory, r2 = length).
enum class Mode { kXdp, kRaw };

/// A persistent session (start_persistent): the persistent kernel stays resident and takes
/// batches through the mailbox ring (gpu_abi.h, KNOD_GPU_MAILBOX_DEPTH slots).
struct PersistentOptions {
  uint32_t blocks = 0;           ///< resident blocks; 0 = the device's choice (cuda: one per SM;
                                 ///< gpusim: 3 host threads, one lane each)
  uint32_t max_batch = 1024;     ///< packets per submitted batch at most
  uint32_t stride = kFrameSize;  ///< bytes per packet slot of every submitted batch
};

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
  /// Packet i runs as virtual CPU i % N, N = the per-CPU maps' slots (loader ncpus): its
  /// bpf_get_smp_processor_id and per-CPU map slot. Each virtual CPU is one lane running its
  /// packets in order, so per-CPU values see no concurrent writers (as in the kernel) and a
  /// batch runs on at most N lanes. Without per-CPU maps every packet has its own lane, as
  /// CPU 0.
  virtual void run(Batch& b) = 0;

  /// Mode::kRaw: runs the entry once with r1 = a copy of `mem` (copied back; r1 = 0 when
  /// `mem` is empty), r2 = its length in bytes. Returns r0 (0 on a fault) and the fault.
  virtual uint64_t run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) = 0;

  /// "cuda", "gpusim": the device name in messages.
  virtual std::string_view name() const = 0;

  /// Persistent mode. After load(): uploads the maps once and starts the persistent kernel.
  /// The maps stay on the device for the whole session: host map reads during a session see
  /// the state at session start; stop() writes the device's maps back. run() is an error
  /// during a session. Throws knod::Error "persistent mode not supported on <name>" (the
  /// default), or for a session already running / no program loaded.
  virtual void start_persistent(const PersistentOptions& opts);
  /// Hands `b` (count <= max_batch, stride = opts.stride; 0 packets is allowed) to the
  /// device; returns its sequence number (0, 1, ...). Returns as soon as a ring slot is free:
  /// with KNOD_GPU_MAILBOX_DEPTH batches in flight it first waits for the oldest (its results
  /// are then in its Batch; complete() still reports it). `b`'s arrays must stay valid and
  /// untouched until complete() has returned its number.
  virtual uint64_t submit(Batch& b);
  /// Waits for the oldest batch not yet reported and returns its number, its results
  /// (verdict, redirect, fault, data_off/len, meta_len, frames) written into its Batch;
  /// nullopt when none is in flight. Batches complete in submission order.
  virtual std::optional<uint64_t> complete();
  /// Completes every batch in flight (results in their Batches, no longer reported by
  /// complete()), ends the kernel and writes the device's maps back to env.maps. No-op
  /// without a session.
  virtual void stop();
  /// True between start_persistent() and stop().
  virtual bool persistent() const { return false; }

 protected:
  /// For run_raw: runs `mem` as a one-packet batch (a slot of mem.size() + device::kTailroom
  /// bytes, rounded up to 256) and copies the bytes back; `fault` gets the lane's fault.
  void run_single(std::vector<uint8_t>& mem, vm::Fault* fault);
};

/// Throws knod::Error "<device>: ..." when b's frames are smaller than its slots
/// (Batch::frame_sz below the stride): a GPU's slots are one frame each (knod_gpu_args has one
/// stride, the frame size of every packet).
void require_frame_per_slot(const Batch& b, const char* device);

}  // namespace knod::device::gpu
