#include "device/cpu/batch_store.h"

#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "base/error.h"

namespace knod::device {
namespace {

constexpr size_t kLine = 64;

size_t lines(size_t bytes) {
  return (bytes + kLine - 1) / kLine * kLine;
}

}  // namespace

void BatchStore::Free::operator()(uint8_t* p) const {
  ::operator delete(p, std::align_val_t(kLine));
}

BatchStore::BatchStore(uint32_t capacity)
    : capacity_(capacity), frames_(size_t(capacity) * kFrameSize) {
  const size_t n = capacity, u32 = lines(n * 4), u64 = lines(n * 8), u8 = lines(n);
  const size_t total = 6 * u32 + 2 * u64 + u8 + kLine;  // + a line so that 0 slots still allocate
  arrays_.reset(
      static_cast<uint8_t*>(::operator new(total, std::align_val_t(kLine), std::nothrow)));
  if (!arrays_) throw Error("batch: out of memory for " + std::to_string(capacity) + " slots");
  std::memset(arrays_.get(), 0, total);
  uint8_t* at = arrays_.get();
  auto take = [&](size_t bytes) { return std::exchange(at, at + bytes); };
  b.count = capacity;
  b.stride = kFrameSize;
  b.frames = frames_.data();
  b.data_off = reinterpret_cast<uint32_t*>(take(u32));
  b.data_len = reinterpret_cast<uint32_t*>(take(u32));
  b.meta_len = reinterpret_cast<uint32_t*>(take(u32));
  b.ingress_ifindex = reinterpret_cast<uint32_t*>(take(u32));
  b.rx_queue_index = reinterpret_cast<uint32_t*>(take(u32));
  b.verdict = reinterpret_cast<uint32_t*>(take(u32));
  b.redirect = reinterpret_cast<uint64_t*>(take(u64));
  clock_ = reinterpret_cast<uint64_t*>(take(u64));
  b.fault = take(u8);
}

}  // namespace knod::device
