#include "device/cpu/frame_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "base/error.h"

namespace knod::device {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

FrameBuffer::FrameBuffer(size_t bytes) {
  if (bytes == 0) return;
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  map_bytes_ = rounded + kHugePage;  // room to align the start
  map_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw Error("frame buffer: mmap of " + std::to_string(map_bytes_) +
                " bytes failed: " + std::strerror(errno));
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(map_);
  data_ = reinterpret_cast<uint8_t*>((base + kHugePage - 1) / kHugePage * kHugePage);
  size_ = bytes;
  madvise(data_, rounded, MADV_HUGEPAGE);  // advice only: EINVAL where THP is compiled out
}

void FrameBuffer::release() {
  if (map_) munmap(map_, map_bytes_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = map_bytes_ = 0;
}

FrameBuffer::~FrameBuffer() {
  release();
}

FrameBuffer::FrameBuffer(FrameBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      map_(std::exchange(o.map_, nullptr)),
      map_bytes_(std::exchange(o.map_bytes_, 0)) {}

FrameBuffer& FrameBuffer::operator=(FrameBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    map_ = std::exchange(o.map_, nullptr);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
  }
  return *this;
}

}  // namespace knod::device
