// Host memory for one device::Batch: `capacity` frames of kFrameSize bytes (a FrameBuffer,
// huge pages) and the batch's per-packet arrays. Every array starts on its own 64-byte cache
// line and is padded to a whole line, so that two arrays never share a line (separate heap
// vectors put one array's end and the next one's start into one line, which the workers at
// both ends of a batch wrote every time). Within an array, workers still share the line
// where one's packets end and another's begin, unless that index is a multiple of 16
// (CpuDevice home slices start on multiples of the chunk, 64 by default).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "device/batch.h"
#include "device/cpu/frame_buffer.h"

namespace knod::device {

class BatchStore {
 public:
  /// `capacity` slots, all zero; b.count = capacity, b.stride = kFrameSize, every array of
  /// the Batch set except clock_ns (null: the device's clock; see clock()). Throws
  /// knod::Error when memory runs out.
  explicit BatchStore(uint32_t capacity);

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
