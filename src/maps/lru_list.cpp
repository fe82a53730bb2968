#include "maps/lru_list.h"

namespace knod::maps {

namespace {
/// Reads and clears a reference byte (bpf_lru_node_clear_ref after the test).
bool take_ref(std::atomic<uint8_t>* ref, uint32_t e) {
  if (!ref[e].load(std::memory_order_relaxed)) return false;
  ref[e].store(0, std::memory_order_relaxed);
  return true;
}
}  // namespace

LruLists::LruLists(uint32_t elements)
    : prev_(elements, kNil), next_(elements, kNil), where_(elements, kNone) {}

void LruLists::push_head(uint8_t w, uint32_t e) {
  List& l = list(w);
  prev_[e] = kNil;
  next_[e] = l.head;
  if (l.head != kNil) prev_[l.head] = e;
  l.head = e;
  if (l.tail == kNil) l.tail = e;
  where_[e] = w;
  ++l.count;
}

void LruLists::remove(uint32_t e) {
  if (where_[e] == kNone) return;
  List& l = list(where_[e]);
  if (prev_[e] != kNil)
    next_[prev_[e]] = next_[e];
  else
    l.head = next_[e];
  if (next_[e] != kNil)
    prev_[next_[e]] = prev_[e];
  else
    l.tail = prev_[e];
  prev_[e] = next_[e] = kNil;
  where_[e] = kNone;
  --l.count;
}

void LruLists::add(uint32_t e) {
  remove(e);
  push_head(kInactive, e);
}

void LruLists::rotate_active(std::atomic<uint8_t>* ref) {
  // Each node is looked at once: the ones moved to the head are not met again this round.
  for (uint32_t n = 0, count = active_.count; n < kScan && n < count; ++n) {
    const uint32_t e = active_.tail;
    remove(e);
    push_head(take_ref(ref, e) ? kActive : kInactive, e);
  }
}

uint32_t LruLists::victim(std::atomic<uint8_t>* ref) {
  if (inactive_.count < active_.count) rotate_active(ref);
  uint32_t first_promoted = kNil;
  for (uint32_t n = 0, count = inactive_.count; n < kScan && n < count; ++n) {
    const uint32_t e = inactive_.tail;
    remove(e);
    if (!take_ref(ref, e)) return e;
    push_head(kActive, e);
    if (first_promoted == kNil) first_promoted = e;
  }
  // Forced: every inactive node scanned was referenced. The oldest of them goes (it was the
  // inactive tail), not an active key that stayed referenced; with no inactive node at all,
  // the active tail.
  const uint32_t e = first_promoted != kNil ? first_promoted
                     : inactive_.count      ? inactive_.tail
                                            : active_.tail;
  if (e != kNil) remove(e);
  return e;
}

}  // namespace knod::maps
