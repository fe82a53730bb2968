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
int bit(const uint8_t* k, uint32_t i) {
  return (k[4 + i / 8] >> (7 - i % 8)) & 1;
}

// Number of leading bits equal in a and b, at most `limit`.
uint32_t common_bits(const uint8_t* a, const uint8_t* b, uint32_t limit) {
  uint32_t i = 0;
  while (i + 8 <= limit && a[4 + i / 8] == b[4 + i / 8]) i += 8;
  while (i < limit && bit(a, i) == bit(b, i)) ++i;
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
}  // namespace

LpmTrieMap::LpmTrieMap(std::string name, MapDef def)
    : Map(name, checked(name, def)),
      max_prefixlen_(8 * (def.key_size - 4)),
      stride_(round_up8(def.value_size)),
      keys_(size_t(def.max_entries) * def.key_size, 0),
      values_(size_t(def.max_entries) * stride_, 0),
      used_(def.max_entries, 0) {}

int32_t LpmTrieMap::longest_match(const uint8_t* key) const {
  uint32_t kp = plen(key);
  if (kp > max_prefixlen_) return -1;  // trie_lookup_elem(): no match at all
  int32_t best = -1;
  uint32_t best_len = 0;
  for (uint32_t i = 0; i < def().max_entries; ++i) {
    if (!used_[i]) continue;
    uint32_t p = plen(key_at(i));
    if (p > kp || (best >= 0 && p <= best_len)) continue;
    if (common_bits(key_at(i), key, p) == p) {
      best = int32_t(i);
      best_len = p;
    }
  }
  return best;
}

int32_t LpmTrieMap::exact(const uint8_t* key) const {
  uint32_t kp = plen(key);
  for (uint32_t i = 0; i < def().max_entries; ++i)
    if (used_[i] && plen(key_at(i)) == kp && common_bits(key_at(i), key, kp) == kp)
      return int32_t(i);
  return -1;
}

bool LpmTrieMap::before(const uint8_t* a, const uint8_t* b) const {
  uint32_t pa = plen(a), pb = plen(b), m = pa < pb ? pa : pb;
  uint32_t c = common_bits(a, b, m);
  if (c == m) return pa > pb;  // one contains the other: the more specific comes first
  return bit(a, c) == 0;
}

void* LpmTrieMap::lookup(const void* key, uint32_t) {
  std::lock_guard<SpinLock> g(lock_);
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

long LpmTrieMap::update(const void* key, const void* value, uint64_t flags, uint32_t) {
  auto* k = static_cast<const uint8_t*>(key);
  if (flags > BPF_EXIST || plen(k) > max_prefixlen_) return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  int32_t i = exact(k);
  if (i >= 0 && flags == BPF_NOEXIST) return -EEXIST;
  if (i < 0 && flags == BPF_EXIST) return -ENOENT;
  if (i < 0) {
    if (n_ == def().max_entries) return -ENOSPC;
    for (uint32_t j = 0; j < def().max_entries; ++j)
      if (!used_[j]) {
        i = int32_t(j);
        break;
      }
    used_[i] = 1;
    ++n_;
  }
  std::memcpy(keys_.data() + size_t(i) * def().key_size, k, def().key_size);
  std::memcpy(values_.data() + size_t(i) * stride_, value, def().value_size);
  return 0;
}

long LpmTrieMap::remove(const void* key) {
  auto* k = static_cast<const uint8_t*>(key);
  if (plen(k) > max_prefixlen_) return -EINVAL;
  std::lock_guard<SpinLock> g(lock_);
  int32_t i = exact(k);
  if (i < 0) return -ENOENT;
  used_[i] = 0;
  --n_;
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
