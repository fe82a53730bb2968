#include "maps/hash.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "maps/jhash.h"
#include "maps/spin_lock.h"

namespace knod::maps {

namespace {
constexpr uint32_t kHtabFlags =
    BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | kAccessFlags | BPF_F_ZERO_SEED;
constexpr uint32_t kNil = HashTable::kNil;
static_assert(sizeof(std::atomic<uint8_t>) == 1 && std::atomic<uint8_t>::is_always_lock_free,
              "lru_ref() hands out the reference bits as plain bytes");
uint32_t hash_fn(const void* key, uint32_t key_size) {
  return htab_hash(key, key_size, 0);
}

bool is_percpu(uint32_t t) {
  return t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}
bool is_lru(uint32_t t) {
  return t == BPF_MAP_TYPE_LRU_HASH || t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

// htab_map_alloc_check(); runs before the table is sized.
const MapDef& checked(const std::string& name, const MapDef& def) {
  check_flags(name, def, kHtabFlags);
  if (!is_lru(def.type) && (def.map_flags & BPF_F_NO_COMMON_LRU))
    bad_def(name, def, "BPF_F_NO_COMMON_LRU on a non-LRU hash");
  if (is_lru(def.type) && (def.map_flags & BPF_F_NO_PREALLOC))
    bad_def(name, def, "BPF_F_NO_PREALLOC on an LRU hash", "ENOTSUPP");
  if (def.max_entries == 0) bad_def(name, def, "max_entries 0");
  if (def.key_size == 0) bad_def(name, def, "key_size 0");
  if (def.value_size == 0) bad_def(name, def, "value_size 0");
  if (def.key_size > 512) bad_def(name, def, "key_size over 512 bytes", "E2BIG");
  if (is_percpu(def.type) && round_up8(def.value_size) > 32768)
    bad_def(name, def, "per-CPU value_size over 32 KiB", "E2BIG");
  if (def.max_entries > (1u << 31)) bad_def(name, def, "max_entries over 2^31", "E2BIG");
  return def;
}

// Per-CPU maps hold ncpus slots per element.
uint32_t elem_bytes(const MapDef& def, uint32_t ncpus) {
  uint64_t b = round_up8(def.value_size) * uint64_t(is_percpu(def.type) ? ncpus : 1);
  return uint32_t(b);
}

struct Guard {
  SpinLock* a;
  SpinLock* b;
  Guard(SpinLock* x, SpinLock* y) : a(x), b(y) {
    if (a) a->lock();
    b->lock();
  }
  ~Guard() {
    b->unlock();
    if (a) a->unlock();
  }
};
}  // namespace

HashMap::HashMap(std::string name, MapDef def, uint32_t ncpus)
    : Map(name, checked(name, def)),
      percpu_(is_percpu(def.type)),
      lru_(is_lru(def.type)),
      ncpus_(percpu_ ? ncpus : 1),
      stride_(round_up8(def.value_size)),
      // Spares for replacing values (htab->extra_elems): one per CPU, one for user space. An
      // LRU map replaces with a node of its own (prealloc_lru_pop), a per-CPU map in place.
      table_(def.key_size, elem_bytes(def, ncpus), def.max_entries, hash_fn,
             percpu_ || lru_ ? 0 : std::max(ncpus, 1u) + 1),
      lru_list_(lru_ ? table_.elements() : 0) {
  if (lru_) ref_.reset(new std::atomic<uint8_t>[table_.elements()]());
  if (percpu_) cpu_block_ = uint64_t(table_.elements()) * stride_;
}

uint32_t HashMap::evict() {
  uint32_t e = lru_list_.victim(ref_.get());
  if (e == kNil) return kNil;
  uint32_t b = table_.bucket(table_.hash(table_.key_at(e)));
  table_.lock(b).lock();
  table_.unlink(b, e);
  table_.lock(b).unlock();
  return e;  // stays counted as allocated: the caller reuses it
}

void* HashMap::lookup(const void* key, uint32_t cpu) {
  uint32_t h = table_.hash(key);
  uint32_t e = table_.find(h, key);  // lock-free, as the kernel's RCU lookup
  if (e == kNil) return nullptr;
  // bpf_lru_node_set_ref(): read first, so hot entries' lines are not written by every CPU.
  if (lru_ && !ref_[e].load(std::memory_order_relaxed)) ref_[e].store(1, std::memory_order_relaxed);
  if (!percpu_) return table_.value_at(e);
  return cpu < ncpus_ ? slot(e, cpu) : nullptr;
}

void HashMap::store(uint32_t e, const void* value, uint32_t cpu, bool fresh) {
  if (!percpu_) {
    if (fresh)
      init_value(def(), table_.value_at(e), value);
    else
      copy_value(def(), table_.value_at(e), value);
  } else if (cpu == kAllCpus) {
    // pcpu_copy_value() copies round_up(value_size, 8) per CPU, padding included.
    for (uint32_t c = 0; c < ncpus_; ++c)
      std::memcpy(slot(e, c), static_cast<const uint8_t*>(value) + size_t(c) * stride_, stride_);
  } else {
    // pcpu_init_value(): a new element gets the value on this CPU and zeroes elsewhere.
    if (fresh)
      for (uint32_t c = 0; c < ncpus_; ++c) std::memset(slot(e, c), 0, stride_);
    std::memcpy(slot(e, cpu), value, def().value_size);
  }
}

long HashMap::do_update(const void* key, const void* value, uint64_t flags, uint32_t cpu) {
  if ((flags & ~uint64_t(BPF_F_LOCK)) > BPF_EXIST) return -EINVAL;
  // BPF_F_LOCK: only a value with a bpf_spin_lock (never an LRU or per-CPU map's, whose
  // update_elem refuses the flag as `map_flags > BPF_EXIST`).
  const bool locked = flags & BPF_F_LOCK;
  if (locked && def().spin_lock_off < 0) return -EINVAL;
  flags &= ~uint64_t(BPF_F_LOCK);
  if (percpu_ && cpu != kAllCpus && cpu >= ncpus_) return -EINVAL;
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  uint32_t fresh = kNil;  // an LRU map's new node, taken before the key is looked up
  if (lru_) {
    map_lock_.lock();
    // htab_lru_map_update_elem(): prealloc_lru_pop() comes first, so on a full map an update
    // evicts even when it then fails or replaces its own key (the per-CPU LRU map skips it
    // for BPF_EXIST). The victim may be the key itself.
    if (!(percpu_ && flags == BPF_EXIST)) {
      fresh = table_.alloc();
      if (fresh == kNil) fresh = evict();
      if (fresh == kNil) {
        map_lock_.unlock();
        return -ENOMEM;
      }
    }
  }
  table_.lock(b).lock();
  long ret = 0;
  uint32_t e = table_.find(h, key);
  if (e != kNil && flags == BPF_NOEXIST) {
    ret = -EEXIST;
  } else if (e == kNil && flags == BPF_EXIST) {
    ret = -ENOENT;
  } else if (e != kNil && locked) {  // in place, under the value's lock
    ret = copy_value_locked(def(), table_.value_at(e), value);
  } else if (e != kNil) {
    // htab_map_update_elem(): the new value in a spare element linked at the head *before*
    // the old element leaves the list, so that a concurrent lookup never misses the key;
    // the old element becomes the spare (an LRU map's: the new node, the old one freed).
    // Per-CPU maps update in place (as the kernel), as do more concurrent updaters than
    // spares.
    uint32_t n = kNil;
    if (!percpu_) n = lru_ ? std::exchange(fresh, kNil) : table_.alloc_spare();
    if (n == kNil) {
      store(e, value, cpu, false);
      // __htab_lru_percpu_map_update_elem(): bpf_lru_node_set_ref(&l_old->lru_node).
      if (lru_) ref_[e].store(1, std::memory_order_relaxed);
    } else {
      std::memcpy(table_.key_at(n), key, def().key_size);
      store(n, value, cpu, true);
      table_.link_head(b, n, h);
      table_.unlink(b, e);
      if (lru_) {  // htab_lru_map_update_elem(): bpf_lru_node_set_ref(&l_new->lru_node)
        ref_[n].store(1, std::memory_order_relaxed);
        lru_list_.remove(e);
        lru_list_.add(n);
        fresh = e;  // freed below
      } else {
        table_.release_spare(e);
      }
    }
  } else {
    e = lru_ ? std::exchange(fresh, kNil) : table_.alloc();
    if (e == kNil) {
      ret = -E2BIG;
    } else {
      std::memcpy(table_.key_at(e), key, def().key_size);
      store(e, value, cpu, true);
      table_.link_head(b, e, h);
      if (lru_) {
        ref_[e].store(0, std::memory_order_relaxed);
        lru_list_.add(e);
      }
    }
  }
  table_.lock(b).unlock();
  if (fresh != kNil) table_.release(fresh);  // htab_lru_push_free(): unused or replaced
  if (lru_) map_lock_.unlock();
  return ret;
}

long HashMap::update(const void* key, const void* value, uint64_t flags, uint32_t cpu) {
  return do_update(key, value, flags, cpu);
}

long HashMap::user_update(const void* key, const void* value, uint64_t flags) {
  if ((flags & BPF_F_LOCK) && def().spin_lock_off < 0) return -EINVAL;  // syscall.c, first
  return do_update(key, value, flags, percpu_ ? kAllCpus : 0);
}

long HashMap::remove(const void* key) {
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  if (lru_) map_lock_.lock();
  table_.lock(b).lock();
  uint32_t e = table_.find(h, key);
  if (e != kNil) {
    table_.unlink(b, e);
    if (lru_) lru_list_.remove(e);
  }
  table_.lock(b).unlock();
  if (e != kNil) table_.release(e);
  if (lru_) map_lock_.unlock();
  return e == kNil ? -ENOENT : 0;
}

uint32_t HashMap::user_value_size() const {
  return percpu_ ? ncpus_ * stride_ : def().value_size;
}

long HashMap::user_lookup(const void* key, void* value) {
  uint32_t h = table_.hash(key), b = table_.bucket(h);
  Guard g(lru_ ? &map_lock_ : nullptr, &table_.lock(b));
  uint32_t e = table_.find(h, key);
  if (e == kNil) return -ENOENT;
  if (!percpu_) {
    std::memcpy(value, table_.value_at(e), def().value_size);
    return 0;
  }
  for (uint32_t c = 0; c < ncpus_; ++c)  // bpf_percpu_hash_copy(): round_up(value_size, 8) each
    std::memcpy(static_cast<uint8_t*>(value) + size_t(c) * stride_, slot(e, c), stride_);
  return 0;
}

long HashMap::get_next_key(const void* key, void* next_key) {
  if (lru_) {
    std::lock_guard<SpinLock> g(map_lock_);
    return table_.get_next_key(key, next_key);
  }
  return table_.get_next_key(key, next_key);
}

}  // namespace knod::maps
