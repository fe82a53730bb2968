// The storage under every hashed map (HASH family, DEVMAP_HASH, HASH_OF_MAPS): a flat,
// preallocated chained table shaped like the kernel's htab (kernel/bpf/hashtab.c):
// n_buckets = roundup_pow_of_two(max_entries), bucket = hash & (n_buckets - 1), new elements
// go to the head of their bucket list, get_next_key walks the bucket list then later buckets.
//
// Memory: keys, values, list links and the free list are separate flat arrays sized at
// creation; nothing is allocated after the constructor. Besides max_entries elements the
// table keeps `spares` extra ones (the kernel's per-CPU htab->extra_elems): replacing a
// key's value links a spare holding the new value at the head *before* the old element is
// unlinked, so a concurrent lookup of a present key never misses; the old element becomes
// the spare. Concurrency: one spinlock per bucket
// guards changes to its list (the kernel's bucket lock); the free list has its own lock,
// always taken after a bucket lock. Lookups take no lock (the kernel's RCU lookups): lists
// end in a "nulls" marker naming their bucket (include/linux/list_nulls.h), an unlinked
// element keeps its successor, and a reader that ends on another bucket's marker (its
// element was deleted and reused meanwhile) starts over (lookup_nulls_elem_raw).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "maps/hash_view.h"
#include "maps/util.h"

namespace knod::maps {

class HashTable {
 public:
  static constexpr uint32_t kNil = kHashNil;
  static constexpr uint32_t kNulls = kHashNulls;  ///< list end: kNulls | bucket
  static bool is_end(uint32_t e) { return (e & kNulls) != 0; }
  using HashFn = uint32_t (*)(const void* key, uint32_t key_size);

  /// value_bytes: bytes stored per element (already multiplied by ncpus for per-CPU maps).
  /// max_entries + spares < 2^31 (an element index must not look like a nulls marker).
  HashTable(uint32_t key_size, uint32_t value_bytes, uint32_t max_entries, HashFn fn,
            uint32_t spares = 0);

  uint32_t key_size() const { return key_size_; }
  uint32_t value_bytes() const { return value_bytes_; }
  uint32_t n_buckets() const { return n_buckets_; }
  uint32_t hash(const void* key) const { return fn_(key, key_size_); }
  uint32_t bucket(uint32_t hash) const { return hash & (n_buckets_ - 1); }
  SpinLock& lock(uint32_t b) { return locks_[b]; }

  /// Element holding `key` (whose hash is `hash`), or kNil. Lock-free (may run while
  /// writers change its bucket): the result held `key` at some point during the call.
  uint32_t find(uint32_t hash, const void* key) const;
  /// The arrays find() walks, for lookups compiled elsewhere (maps/hash_view.h).
  HashView view();

  // ---- under lock(b) ----
  void link_head(uint32_t b, uint32_t e, uint32_t hash);
  void unlink(uint32_t b, uint32_t e);

  /// A free element or kNil when all max_entries are in use.
  uint32_t alloc();
  void release(uint32_t e);
  /// A spare element (not counted in count()) or kNil when all spares are out; give it
  /// back, or the element it replaced, with release_spare.
  uint32_t alloc_spare();
  void release_spare(uint32_t e);
  uint32_t count() const { return count_; }
  /// Elements in the arrays: max_entries plus the spares (indexes of per-element arrays).
  uint32_t elements() const { return uint32_t(next_.size()); }

  uint8_t* key_at(uint32_t e) { return keys_.data() + size_t(e) * key_size_; }
  uint8_t* value_at(uint32_t e) { return values_.data() + size_t(e) * value_bytes_; }
  /// Index of the element whose value contains `p`, or kNil.
  uint32_t element_of(const void* p) const;

  /// The kernel's htab_map_get_next_key(): key nullptr or absent -> first element.
  long get_next_key(const void* key, void* next_key);

  Map::Pool pool() { return {values_.data(), values_.size()}; }

 private:
  uint32_t key_size_, value_bytes_, max_entries_, n_buckets_;
  HashFn fn_;
  std::vector<uint32_t> head_, next_, prev_, hash_;
  std::vector<uint8_t> keys_, values_;
  std::vector<uint32_t> free_, spare_;
  uint32_t nfree_ = 0, count_ = 0, nspare_ = 0;
  SpinLock free_lock_;
  std::unique_ptr<SpinLock[]> locks_;
};

}  // namespace knod::maps
