#include "device/cpu/batch_store.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "base/error.h"

namespace knod::device {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kArrays = 9;

/// Bytes of the region of an array of `bytes`: rounded up to pages, plus one page of gap.
/// The arrays lie a gap apart: a worker whose sweep of its slots ends at an array's last
/// lines runs its hardware prefetcher on into the gap, not into the first lines of the next
/// array, which another worker writes (CpuDevice::backward explains the same at the
/// boundary between two workers' slots).
size_t region(size_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage + kPage;
}

}  // namespace

void BatchStore::Free::operator()(uint8_t* p) const {
  ::operator delete(p, std::align_val_t(kPage));
}

BatchStore::BatchStore(uint32_t capacity, uint32_t pitch)
    : capacity_(capacity), frames_(size_t(capacity) * std::max(pitch, kFrameSize)) {
  const size_t n = capacity;
  const size_t bytes[kArrays] = {n * 4, n * 4, n * 4, n * 4, n * 4, n * 4, n * 8, n * 8, n};
  size_t total = 0;
  for (size_t k = 0; k < kArrays; ++k) total += region(bytes[k]);
  arrays_.reset(
      static_cast<uint8_t*>(::operator new(total, std::align_val_t(kPage), std::nothrow)));
  if (!arrays_) throw Error("batch: out of memory for " + std::to_string(capacity) + " slots");
  std::memset(arrays_.get(), 0, total);
  uint8_t* at = arrays_.get();
  size_t k = 0;
  auto take = [&] { return std::exchange(at, at + region(bytes[k++])); };  // in `bytes` order
  b.count = capacity;
  b.stride = std::max(pitch, kFrameSize);
  b.frame_sz = kFrameSize;
  b.frames = frames_.data();
  b.data_off = reinterpret_cast<uint32_t*>(take());
  b.data_len = reinterpret_cast<uint32_t*>(take());
  b.meta_len = reinterpret_cast<uint32_t*>(take());
  b.ingress_ifindex = reinterpret_cast<uint32_t*>(take());
  b.rx_queue_index = reinterpret_cast<uint32_t*>(take());
  b.verdict = reinterpret_cast<uint32_t*>(take());
  b.redirect = reinterpret_cast<uint64_t*>(take());
  clock_ = reinterpret_cast<uint64_t*>(take());
  b.fault = take();
}

}  // namespace knod::device
