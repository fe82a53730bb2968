// Host memory for one device::Batch: `capacity` frames of kFrameSize bytes, `pitch` bytes
// apart (kSlotPitch: cache sets, see there; a GPU's batches: kFrameSize) in a FrameBuffer
// (huge pages), and the batch's per-packet arrays. Every array starts on pages of its own,
// one page after the previous array's last: no two arrays share a line (separate heap
// vectors put one array's end and the next one's start into one line, which the workers at
// both ends of a batch wrote every time), and a worker's hardware prefetcher running past
// an array's end reaches the gap, not the next array's first lines, which another worker
// writes. Within an array, workers meet where one's packets end and another's begin
// (CpuDevice home slices start on multiples of the chunk, 64 by default);
// CpuDevice::backward makes them walk apart from there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "device/batch.h"
#include "device/cpu/frame_buffer.h"

namespace knod::device {

class BatchStore {
 public:
  /// `capacity` slots, all zero; b.count = capacity, b.stride = pitch (>= kFrameSize),
  /// b.frame_sz = kFrameSize, every array of the Batch set except clock_ns (null: the
  /// device's clock; see clock()). Throws knod::Error when memory runs out.
  explicit BatchStore(uint32_t capacity, uint32_t pitch = kSlotPitch);

  Batch b;
  uint32_t capacity() const { return capacity_; }
  /// Per-packet time in ns for Batch::clock_ns (capacity entries, zeroed); b.clock_ns
  /// stays null until the caller points it here.
  uint64_t* clock() { return clock_; }
  uint8_t* slot(uint32_t i) { return b.frames + size_t(i) * b.stride; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  uint32_t capacity_;
  FrameBuffer frames_;
  std::unique_ptr<uint8_t, Free> arrays_;
  uint64_t* clock_ = nullptr;
};

}  // namespace knod::device
