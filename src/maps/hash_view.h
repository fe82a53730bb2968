// The lock-free lookup walk of a HashTable (maps/hash_table.h) over its flat arrays, shared by
// HashTable::find and the JIT's inlined bpf_map_lookup_elem (jit/runtime/rt.cpp, compiled to
// LLVM bitcode: header-only, no library calls but memcmp). Lists end in a "nulls" marker
// naming their bucket (include/linux/list_nulls.h); a walk that ends on another bucket's
// marker (its element was deleted and reused meanwhile) starts over, as the kernel's
// lookup_nulls_elem_raw() does.
#pragma once

#include <cstdint>
#include <cstring>

namespace knod::maps {

/// Borrowed pointers into a HashTable; valid as long as the table (its arrays never move).
struct HashView {
  const uint32_t* head = nullptr;  ///< [n_buckets] element index, or kNulls | bucket
  const uint32_t* next = nullptr;  ///< [max_entries] successor, or kNulls | bucket
  const uint32_t* hash = nullptr;  ///< [max_entries] full hash of each element's key
  const uint8_t* keys = nullptr;   ///< [max_entries][key_size]
  uint8_t* values = nullptr;       ///< [max_entries][value_bytes]
  uint32_t key_size = 0;           ///< bytes
  uint32_t value_bytes = 0;        ///< bytes per element; per-CPU maps: CPU 0's value
                                   ///< (HashMap::view; the others cpu_block() bytes apart)
  uint32_t mask = 0;               ///< n_buckets - 1 (n_buckets a power of two)
};

inline constexpr uint32_t kHashNil = UINT32_MAX;  ///< no element
inline constexpr uint32_t kHashNulls = 1u << 31;  ///< list end marker bit

/// Element holding `key` (key_size bytes) whose hash is `h`, or kHashNil. Lock-free: may run
/// while writers change the lists; the result held `key` at some point during the call.
/// `key_size` is passed apart from the view so that a constant folds into the compares.
inline uint32_t hash_view_find(const HashView& v, uint32_t h, const void* key, uint32_t key_size) {
  const uint32_t b = h & v.mask;
  for (;;) {
    uint32_t e = __atomic_load_n(&v.head[b], __ATOMIC_ACQUIRE);
    for (; !(e & kHashNulls); e = __atomic_load_n(&v.next[e], __ATOMIC_ACQUIRE))
      if (__atomic_load_n(&v.hash[e], __ATOMIC_RELAXED) == h &&
          std::memcmp(v.keys + size_t(e) * key_size, key, key_size) == 0)
        return e;
    if (e == (kHashNulls | b)) return kHashNil;
  }
}

}  // namespace knod::maps
