// Host side of the mailbox ring (see mailbox_ring.h, protocol in gpu_abi.h).
#include "device/gpu/mailbox_ring.h"

#include <atomic>
#include <thread>

#include "base/error.h"

namespace knod::device::gpu {
namespace {

std::atomic_ref<uint32_t> state(knod_gpu_mailbox_slot& s) {
  return std::atomic_ref<uint32_t>(s.state);
}

}  // namespace

MailboxRing::MailboxRing(knod_gpu_mailbox* mb, Hooks hooks) : mb_(mb), h_(std::move(hooks)) {}

uint64_t MailboxRing::submit(Batch& b) {
  if (flight_.size() == KNOD_GPU_MAILBOX_DEPTH) {
    uint64_t oldest = next_ - flight_.size();
    retire_oldest();
    done_.push_back(oldest);
  }
  uint32_t k = uint32_t(next_ % KNOD_GPU_MAILBOX_DEPTH);
  knod_gpu_mailbox_slot& s = mb_->slot[k];
  if (state(s).load(std::memory_order_acquire) != KNOD_MB_FREE)
    throw Error("mailbox slot " + std::to_string(k) + " is not free");
  s.args = h_.stage(k, b);
  s.seq = next_;
  state(s).store(KNOD_MB_READY, std::memory_order_release);  // args and seq first
  flight_.push_back(&b);
  return next_++;
}

void MailboxRing::retire_oldest() {
  uint64_t seq = next_ - flight_.size();
  uint32_t k = uint32_t(seq % KNOD_GPU_MAILBOX_DEPTH);
  knod_gpu_mailbox_slot& s = mb_->slot[k];
  for (uint64_t spins = 0; state(s).load(std::memory_order_acquire) != KNOD_MB_DONE; ++spins) {
    if (spins % 1024 == 1023) h_.check_alive();
    std::this_thread::yield();
  }
  h_.unstage(k, *flight_.front());  // the device's results are visible (acquire of DONE)
  flight_.pop_front();
  state(s).store(KNOD_MB_FREE, std::memory_order_release);
}

std::optional<uint64_t> MailboxRing::complete() {
  if (!done_.empty()) {
    uint64_t seq = done_.front();
    done_.pop_front();
    return seq;
  }
  if (flight_.empty()) return std::nullopt;
  uint64_t seq = next_ - flight_.size();
  retire_oldest();
  return seq;
}

void MailboxRing::drain() {
  while (!flight_.empty()) retire_oldest();
  done_.clear();
}

void MailboxRing::post_exit() {
  if (!flight_.empty()) throw Error("mailbox: EXIT with batches in flight");
  knod_gpu_mailbox_slot& s = mb_->slot[next_ % KNOD_GPU_MAILBOX_DEPTH];
  s.seq = next_;
  state(s).store(KNOD_MB_EXIT, std::memory_order_release);
}

}  // namespace knod::device::gpu
