#include "device/gpu/batch_device.h"

#include <cstring>
#include <string>

#include "base/error.h"

namespace knod::device::gpu {

void require_frame_per_slot(const Batch& b, const char* device) {
  if (frame_size(b) != b.stride)
    throw Error(std::string(device) + ": a batch of " + std::to_string(frame_size(b)) +
                "-byte frames " + std::to_string(b.stride) +
                " bytes apart (a GPU's slots are one frame each)");
}

void BatchDevice::run_single(std::vector<uint8_t>& mem, vm::Fault* fault) {
  // The slot keeps device::kTailroom after the data, as every batch slot.
  const uint32_t stride = uint32_t((mem.size() + kTailroom + 255) & ~size_t(255));
  std::vector<uint8_t> frame(stride, 0);
  if (!mem.empty()) std::memcpy(frame.data(), mem.data(), mem.size());
  uint32_t off = 0, len = uint32_t(mem.size()), meta = 0, verdict = 0;
  uint64_t redirect = 0;
  uint8_t f = 0;
  Batch b;
  b.count = 1;
  b.stride = stride;
  b.frames = frame.data();
  b.data_off = &off;
  b.data_len = &len;
  b.meta_len = &meta;
  b.verdict = &verdict;
  b.redirect = &redirect;
  b.fault = &f;
  run(b);
  if (!mem.empty()) std::memcpy(mem.data(), frame.data(), mem.size());
  if (fault) *fault = static_cast<vm::Fault>(f);
}

namespace {
[[noreturn]] void no_persistent(std::string_view dev) {
  throw Error(std::string("persistent mode not supported on ") + std::string(dev));
}
}  // namespace

void BatchDevice::start_persistent(const PersistentOptions&) {
  no_persistent(name());
}
uint64_t BatchDevice::submit(Batch&) {
  no_persistent(name());
}
std::optional<uint64_t> BatchDevice::complete() {
  no_persistent(name());
}
void BatchDevice::stop() {}

}  // namespace knod::device::gpu
