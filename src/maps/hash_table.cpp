#include "maps/hash_table.h"

#include <bit>
#include <cstring>

namespace knod::maps {

HashTable::HashTable(uint32_t key_size, uint32_t value_bytes, uint32_t max_entries, HashFn fn)
    : key_size_(key_size),
      value_bytes_(value_bytes),
      max_entries_(max_entries),
      n_buckets_(std::bit_ceil(max_entries)),
      fn_(fn),
      head_(n_buckets_, kNil),
      next_(max_entries, kNil),
      prev_(max_entries, kNil),
      hash_(max_entries, 0),
      keys_(size_t(max_entries) * key_size, 0),
      values_(size_t(max_entries) * value_bytes, 0),
      free_(max_entries),
      nfree_(max_entries),
      locks_(new SpinLock[n_buckets_]) {
  // Pop order 0, 1, 2...: free_ is a stack, so fill it reversed.
  for (uint32_t i = 0; i < max_entries; ++i) free_[i] = max_entries - 1 - i;
}

uint32_t HashTable::find(uint32_t b, uint32_t hash, const void* key) const {
  for (uint32_t e = head_[b]; e != kNil; e = next_[e])
    if (hash_[e] == hash && std::memcmp(keys_.data() + size_t(e) * key_size_, key, key_size_) == 0)
      return e;
  return kNil;
}

void HashTable::link_head(uint32_t b, uint32_t e, uint32_t hash) {
  hash_[e] = hash;
  prev_[e] = kNil;
  next_[e] = head_[b];
  if (head_[b] != kNil) prev_[head_[b]] = e;
  head_[b] = e;
}

void HashTable::unlink(uint32_t b, uint32_t e) {
  if (prev_[e] != kNil) {
    next_[prev_[e]] = next_[e];
  } else {
    head_[b] = next_[e];
  }
  if (next_[e] != kNil) prev_[next_[e]] = prev_[e];
  next_[e] = prev_[e] = kNil;
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
    uint32_t e = find(b, h, key);
    if (e != kNil) {
      uint32_t n = next_[e];
      if (n != kNil) {
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
    if (e != kNil) std::memcpy(next_key, key_at(e), key_size_);
    locks_[i].unlock();
    if (e != kNil) return 0;
  }
  return -ENOENT;
}

}  // namespace knod::maps
