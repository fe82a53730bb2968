// The host side of the persistent kernel's mailbox ring (gpu_abi.h knod_gpu_mailbox): posts
// batches into the KNOD_GPU_MAILBOX_DEPTH slots in order, waits for DONE, frees the slots.
// Device-neutral: the device stages a batch into a slot (copy in, knod_gpu_args with device
// addresses) and copies the results back through Hooks. Used by the CUDA device and gpusim.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

#include "device/batch.h"
#include "device/gpu/gpu_abi.h"

namespace knod::device::gpu {

class MailboxRing {
 public:
  struct Hooks {
    /// Batch `b` goes to slot `slot`: copy it where the device reads it, return its args.
    std::function<knod_gpu_args(uint32_t slot, Batch& b)> stage;
    /// Slot `slot` is DONE: copy its results back into `b`.
    std::function<void(uint32_t slot, Batch& b)> unstage;
    /// Called while waiting for DONE: throws knod::Error when the kernel is gone or failed.
    std::function<void()> check_alive;
  };

  /// `mb`: the host's view of the mailbox, every slot FREE.
  MailboxRing(knod_gpu_mailbox* mb, Hooks hooks);

  /// Posts `b` (READY) in the next slot, first retiring the oldest batch if every slot is in
  /// flight. Returns the batch number (0, 1, ...).
  uint64_t submit(Batch& b);
  /// The oldest batch not yet reported: retired already or waited for now; nullopt if none.
  std::optional<uint64_t> complete();
  /// Retires every batch in flight (not reported by complete() afterwards).
  void drain();
  /// With nothing in flight: posts EXIT in the next slot (every block returns).
  void post_exit();
  /// Batches posted and not yet retired.
  size_t in_flight() const { return flight_.size(); }

 private:
  void retire_oldest();
  knod_gpu_mailbox* mb_;
  Hooks h_;
  uint64_t next_ = 0;          // number of the next batch posted
  std::deque<Batch*> flight_;  // posted, not retired, oldest first (number next_ - size + i)
  std::deque<uint64_t> done_;  // retired by submit(), not reported yet
};

}  // namespace knod::device::gpu
