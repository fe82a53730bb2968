#include "maps/hash_table.h"

#include <atomic>
#include <bit>
#include <cstring>

#include "base/error.h"

namespace knod::maps {

HashTable::HashTable(uint32_t key_size, uint32_t value_bytes, uint32_t max_entries, HashFn fn,
                     uint32_t spares)
    : key_size_(key_size),
      value_bytes_(value_bytes),
      max_entries_(max_entries),
      n_buckets_(std::bit_ceil(max_entries)),
      fn_(fn),
      head_(n_buckets_),
      next_(size_t(max_entries) + spares, kNil),
      prev_(size_t(max_entries) + spares, kNil),
      hash_(size_t(max_entries) + spares, 0),
      keys_((size_t(max_entries) + spares) * key_size, 0),
      values_((size_t(max_entries) + spares) * value_bytes, 0),
      free_(max_entries),
      spare_(spares),
      nfree_(max_entries),
      nspare_(spares),
      locks_(new SpinLock[n_buckets_]) {
  if (uint64_t(max_entries) + spares >= kNulls)
    throw Error("hash table: max_entries must be below 2^31");
  for (uint32_t i = 0; i < spares; ++i) spare_[i] = max_entries + i;
  for (uint32_t b = 0; b < n_buckets_; ++b) head_[b] = kNulls | b;
  // Pop order 0, 1, 2...: free_ is a stack, so fill it reversed.
  for (uint32_t i = 0; i < max_entries; ++i) free_[i] = max_entries - 1 - i;
}

namespace {
void publish(uint32_t& x, uint32_t v) {
  std::atomic_ref<uint32_t>(x).store(v, std::memory_order_release);
}
}  // namespace

uint32_t HashTable::find(uint32_t hash, const void* key) const {
  HashView v{head_.data(), next_.data(), hash_.data(), keys_.data(),
             nullptr,      key_size_,    value_bytes_, n_buckets_ - 1};
  return hash_view_find(v, hash, key, key_size_);
}

HashView HashTable::view() {
  return HashView{head_.data(),   next_.data(), hash_.data(), keys_.data(),
                  values_.data(), key_size_,    value_bytes_, n_buckets_ - 1};
}

void HashTable::link_head(uint32_t b, uint32_t e, uint32_t hash) {
  std::atomic_ref<uint32_t>(hash_[e]).store(hash, std::memory_order_relaxed);
  prev_[e] = kNil;
  std::atomic_ref<uint32_t>(next_[e]).store(head_[b], std::memory_order_relaxed);
  if (!is_end(head_[b])) prev_[head_[b]] = e;
  publish(head_[b], e);  // key, value and next_ written before readers can reach e
}

void HashTable::unlink(uint32_t b, uint32_t e) {
  // next_[e] stays: a reader standing on e still reaches the rest of the list.
  if (prev_[e] != kNil) {
    publish(next_[prev_[e]], next_[e]);
  } else {
    publish(head_[b], next_[e]);
  }
  if (!is_end(next_[e])) prev_[next_[e]] = prev_[e];
  prev_[e] = kNil;
}

uint32_t HashTable::alloc() {
  free_lock_.lock();
  uint32_t e = kNil;
  if (nfree_) {
    e = free_[--nfree_];
    ++count_;
  }
  free_lock_.unlock();
  return e;
}

void HashTable::release(uint32_t e) {
  free_lock_.lock();
  free_[nfree_++] = e;
  --count_;
  free_lock_.unlock();
}

uint32_t HashTable::alloc_spare() {
  free_lock_.lock();
  uint32_t e = nspare_ ? spare_[--nspare_] : kNil;
  free_lock_.unlock();
  return e;
}

void HashTable::release_spare(uint32_t e) {
  free_lock_.lock();
  spare_[nspare_++] = e;
  free_lock_.unlock();
}

uint32_t HashTable::element_of(const void* p) const {
  auto* b = static_cast<const uint8_t*>(p);
  if (value_bytes_ == 0 || b < values_.data() || b >= values_.data() + values_.size()) return kNil;
  return uint32_t((b - values_.data()) / value_bytes_);
}

long HashTable::get_next_key(const void* key, void* next_key) {
  uint32_t i = 0;
  if (key) {
    uint32_t h = hash(key), b = bucket(h);
    locks_[b].lock();
    uint32_t e = find(h, key);
    if (e != kNil) {
      uint32_t n = next_[e];
      if (!is_end(n)) {
        std::memcpy(next_key, key_at(n), key_size_);
        locks_[b].unlock();
        return 0;
      }
      i = b + 1;
    }
    locks_[b].unlock();
  }
  for (; i < n_buckets_; ++i) {
    locks_[i].lock();
    uint32_t e = head_[i];
    if (!is_end(e)) std::memcpy(next_key, key_at(e), key_size_);
    locks_[i].unlock();
    if (!is_end(e)) return 0;
  }
  return -ENOENT;
}

}  // namespace knod::maps
