#include "maps/lpm_trie.h"

#include <cstring>
#include <mutex>

namespace knod::maps {

namespace {
constexpr uint32_t kLpmFlags = BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE | kAccessFlags;

uint32_t plen(const uint8_t* k) {
  uint32_t p;
  std::memcpy(&p, k, 4);
  return p;
}
// Node key bytes are read by lock-free readers while a writer may store them: both sides use
// relaxed atomic byte accesses; the sequence counter tells readers to retry.
uint8_t ld(const uint8_t* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
void store_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) __atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
}
int bit(const uint8_t* k, uint32_t i) {
  return (k[4 + i / 8] >> (7 - i % 8)) & 1;
}
int node_bit(const uint8_t* k, uint32_t i) {
  return (ld(k + 4 + i / 8) >> (7 - i % 8)) & 1;
}

// Number of leading bits equal in a and b, at most `limit`.
uint32_t common_bits(const uint8_t* a, const uint8_t* b, uint32_t limit) {
  uint32_t i = 0;
  while (i + 8 <= limit && a[4 + i / 8] == b[4 + i / 8]) i += 8;
  while (i < limit && bit(a, i) == bit(b, i)) ++i;
  return i;
}
// Same, where `node` is a trie node's key (atomic byte loads); kernel longest_prefix_match().
uint32_t node_common_bits(const uint8_t* node, const uint8_t* key, uint32_t limit) {
  uint32_t i = 0;
  while (i + 8 <= limit && ld(node + 4 + i / 8) == key[4 + i / 8]) i += 8;
  while (i < limit && node_bit(node, i) == bit(key, i)) ++i;
  return i;
}

const MapDef& checked(const std::string& name, const MapDef& def) {
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (!(def.map_flags & BPF_F_NO_PREALLOC))
    bad_def(name, def, "LPM_TRIE needs map_flags BPF_F_NO_PREALLOC");
  check_flags(name, def, kLpmFlags);
  if (def.key_size < 5 || def.key_size > 4 + 256)
    bad_def(name, def, "key_size must be 4 + 1..256 data bytes");
  if (def.value_size == 0) bad_def(name, def, "value_size 0");
  return def;
}

// Writer side of the sequence counter (callers hold the map lock).
class WriteSection {
 public:
  explicit WriteSection(std::atomic<uint64_t>& seq)
      : seq_(seq), s_(seq.load(std::memory_order_relaxed)) {
    seq_.store(s_ + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~WriteSection() { seq_.store(s_ + 2, std::memory_order_release); }
  WriteSection(const WriteSection&) = delete;
  WriteSection& operator=(const WriteSection&) = delete;

 private:
  std::atomic<uint64_t>& seq_;
  uint64_t s_;
};
}  // namespace

LpmTrieMap::LpmTrieMap(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      max_prefixlen_(8 * (def.key_size - 4)),
      stride_(round_up8(def.value_size)),
      keys_(size_t(def.max_entries) * def.key_size, 0),
      values_(size_t(def.max_entries) * stride_, 0),
      im_keys_(size_t(def.max_entries) * def.key_size, 0),
      child_(std::make_unique<std::atomic<int32_t>[]>(size_t(def.max_entries) * 4)),
      plen_(std::make_unique<std::atomic<uint32_t>[]>(size_t(def.max_entries) * 2)),
      used_(def.max_entries, 0) {
  for (size_t i = 0; i < size_t(def.max_entries) * 4; ++i)
    child_[i].store(-1, std::memory_order_relaxed);
  free_slots_.reserve(def.max_entries);
  free_im_.reserve(def.max_entries);
  for (uint32_t i = def.max_entries; i-- > 0;) {
    free_slots_.push_back(int32_t(i));
    free_im_.push_back(int32_t(def.max_entries + i));
  }
}

void LpmTrieMap::set_node(int32_t n, uint32_t prefixlen, int32_t c0, int32_t c1) {
  plen_[n].store(prefixlen, std::memory_order_relaxed);
  child(n, 0).store(c0, std::memory_order_relaxed);
  child(n, 1).store(c1, std::memory_order_relaxed);
}

int32_t LpmTrieMap::longest_match(const uint8_t* key) const {
  uint32_t kp = plen(key);
  if (kp > max_prefixlen_) return -1;  // trie_lookup_elem(): no match at all
  const uint32_t nodes = 2 * def().max_entries;
  for (;;) {
    uint64_t s = seq_.load(std::memory_order_acquire);
    if (s & 1) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    int32_t found = -1;
    int32_t n = root_.load(std::memory_order_relaxed);
    // A walk that overlaps a write may see a half-changed trie: the bounds keep it finite and
    // inside the node arrays, and the sequence check below discards its result.
    for (uint32_t steps = 0; n >= 0 && uint32_t(n) < nodes && steps <= max_prefixlen_; ++steps) {
      uint32_t np = nplen(n);
      if (np > max_prefixlen_) break;
      uint32_t m = node_common_bits(node_key(n), key, np < kp ? np : kp);
      if (m == max_prefixlen_) {
        found = n;
        break;
      }
      if (m < np) break;
      if (!is_im(n)) found = n;
      n = child(n, bit(key, np));
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == s) return is_im(found) ? -1 : found;
  }
}

int32_t LpmTrieMap::exact(const uint8_t* key) const {
  uint32_t kp = plen(key), np = 0, m = 0;
  int32_t n = root_.load(std::memory_order_relaxed);
  while (n >= 0) {
    np = nplen(n);
    m = node_common_bits(node_key(n), key, np < kp ? np : kp);
    if (np != m || np == kp) break;
    n = child(n, bit(key, np));
  }
  if (n < 0 || np != kp || np != m || is_im(n)) return -1;
  return n;
}

bool LpmTrieMap::before(const uint8_t* a, const uint8_t* b) const {
  uint32_t pa = plen(a), pb = plen(b), m = pa < pb ? pa : pb;
  uint32_t c = common_bits(a, b, m);
  if (c == m) return pa > pb;  // one contains the other: the more specific comes first
  return bit(a, c) == 0;
}

void* LpmTrieMap::lookup(const void* key, uint32_t) {
  int32_t i = longest_match(static_cast<const uint8_t*>(key));
  return i < 0 ? nullptr : values_.data() + size_t(i) * stride_;
}

long LpmTrieMap::user_lookup(const void* key, void* value) {
  std::lock_guard<SpinLock> g(lock_);
  int32_t i = longest_match(static_cast<const uint8_t*>(key));
  if (i < 0) return -ENOENT;
  std::memcpy(value, values_.data() + size_t(i) * stride_, def().value_size);
  return 0;
}

// trie_update_elem(): walk to the slot where the prefix belongs, then replace the node there,
// hang the new node in an empty slot, insert it above the node, or join both under a new
// intermediate node at their first differing bit.
long LpmTrieMap::update(const void* key, const void* value, uint64_t flags, uint32_t) {
  auto* k = static_cast<const uint8_t*>(key);
  uint32_t kp = plen(k);
  if (flags > BPF_EXIST || kp > max_prefixlen_) return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  std::atomic<int32_t>* slot = &root_;
  int32_t n;
  uint32_t np = 0, m = 0;
  while ((n = slot->load(std::memory_order_relaxed)) >= 0) {
    np = nplen(n);
    m = node_common_bits(node_key(n), k, np < kp ? np : kp);
    if (np != m || np == kp || np == max_prefixlen_) break;
    slot = &child(n, bit(k, np));
  }
  if (n >= 0 && np == m && !is_im(n)) {  // the prefix is stored: replace key bytes and value
    if (flags == BPF_NOEXIST) return -EEXIST;
    {
      WriteSection w(seq_);
      store_bytes(node_key(n), k, def().key_size);
    }
    std::memcpy(values_.data() + size_t(n) * stride_, value, def().value_size);
    return 0;
  }
  if (flags == BPF_EXIST) return -ENOENT;  // trie_check_add_elem()
  if (n_ == def().max_entries) return -ENOSPC;
  int32_t e = free_slots_.back();
  free_slots_.pop_back();
  used_[e] = 1;
  ++n_;
  std::memcpy(values_.data() + size_t(e) * stride_, value, def().value_size);
  WriteSection w(seq_);
  store_bytes(node_key(e), k, def().key_size);
  if (n < 0) {
    set_node(e, kp, -1, -1);
  } else if (np == m) {  // an intermediate node of this prefix becomes the element
    set_node(e, kp, child(n, 0).load(std::memory_order_relaxed),
             child(n, 1).load(std::memory_order_relaxed));
    free_im_.push_back(n);
  } else if (m == kp) {  // the new prefix contains the node: insert it above
    if (node_bit(node_key(n), m))
      set_node(e, kp, -1, n);
    else
      set_node(e, kp, n, -1);
  } else {  // join both under an intermediate node at their first differing bit
    int32_t im = free_im_.back();
    free_im_.pop_back();
    store_bytes(node_key(im), node_key(n), def().key_size);
    if (bit(k, m))
      set_node(im, m, n, e);
    else
      set_node(im, m, e, n);
    set_node(e, kp, -1, -1);
    e = im;
  }
  slot->store(e, std::memory_order_relaxed);
  return 0;
}

// trie_delete_elem(): an element with two children stays as an intermediate node; a childless
// element under an intermediate parent takes the parent with it; otherwise its one child (or
// nothing) takes its place.
long LpmTrieMap::remove(const void* key) {
  auto* k = static_cast<const uint8_t*>(key);
  uint32_t kp = plen(k);
  if (kp > max_prefixlen_) return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  std::atomic<int32_t>*trim = &root_, *trim2 = &root_;
  int32_t parent = -1, n;
  uint32_t np = 0, m = 0;
  while ((n = trim->load(std::memory_order_relaxed)) >= 0) {
    np = nplen(n);
    m = node_common_bits(node_key(n), k, np < kp ? np : kp);
    if (np != m || np == kp) break;
    parent = n;
    trim2 = trim;
    trim = &child(n, bit(k, np));
  }
  if (n < 0 || np != kp || np != m || is_im(n)) return -ENOENT;
  int32_t c0 = child(n, 0).load(std::memory_order_relaxed);
  int32_t c1 = child(n, 1).load(std::memory_order_relaxed);
  {
    WriteSection w(seq_);
    if (c0 >= 0 && c1 >= 0) {
      int32_t im = free_im_.back();
      free_im_.pop_back();
      store_bytes(node_key(im), node_key(n), def().key_size);
      set_node(im, np, c0, c1);
      trim->store(im, std::memory_order_relaxed);
    } else if (parent >= 0 && is_im(parent) && c0 < 0 && c1 < 0) {
      int32_t other = child(parent, child(parent, 0).load(std::memory_order_relaxed) == n ? 1 : 0)
                          .load(std::memory_order_relaxed);
      trim2->store(other, std::memory_order_relaxed);
      free_im_.push_back(parent);
    } else {
      trim->store(c0 >= 0 ? c0 : c1, std::memory_order_relaxed);
    }
    set_node(n, 0, -1, -1);
  }
  used_[n] = 0;
  --n_;
  free_slots_.push_back(n);
  return 0;
}

long LpmTrieMap::get_next_key(const void* key, void* next_key) {
  auto* k = static_cast<const uint8_t*>(key);
  std::lock_guard<SpinLock> g(lock_);
  bool from_start = !k || plen(k) > max_prefixlen_ || exact(k) < 0;
  int32_t best = -1;
  for (uint32_t i = 0; i < def().max_entries; ++i) {
    if (!used_[i]) continue;
    if (!from_start && !before(k, key_at(i))) continue;
    if (best < 0 || before(key_at(i), key_at(best))) best = int32_t(i);
  }
  if (best < 0) return -ENOENT;
  std::memcpy(next_key, key_at(best), def().key_size);
  return 0;
}

}  // namespace knod::maps
