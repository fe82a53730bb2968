// Host memory for batch frames (device::Batch::frames): one anonymous mapping aligned to 2 MiB
// and advised MADV_HUGEPAGE, so that a batch of 4 KiB frames spans a few huge pages instead
// of one TLB entry per packet (VPP's buffer pools live in huge pages for the same reason).
// Zero-filled. Falls back to normal pages where transparent huge pages are off.
#pragma once

#include <cstddef>
#include <cstdint>

namespace knod::device {

class FrameBuffer {
 public:
  FrameBuffer() = default;
  /// `bytes` of zeroed memory. Throws knod::Error when the mapping fails (ENOMEM).
  explicit FrameBuffer(size_t bytes);
  ~FrameBuffer();
  FrameBuffer(FrameBuffer&& o) noexcept;
  FrameBuffer& operator=(FrameBuffer&& o) noexcept;
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  ///< the whole mapping (data_ is its 2 MiB-aligned part)
  size_t map_bytes_ = 0;
};

}  // namespace knod::device
