/* The GPU runtime: knod's run-time ABI (jit/runtime/rt.h) for programs running one packet per
 * GPU thread, plus the batch entries (knod_gpu_entry: one launch per batch; knod_gpu_persistent:
 * a resident grid fed through the mailbox ring of gpu_abi.h). Compiled with clang -O2 -emit-llvm
 * for nvptx64-nvidia-cuda and amdgcn-amd-amdhsa and linked into each lowered program. `run` is a
 * knod_gpu_run. Also compiled for x86-64: the host-simulated GPU (device/gpu/host_sim.h) runs the
 * same code lane by lane; its lane number and clock come from the host (knod_sim_*). Semantics
 * follow the kernel: net/core/filter.c (XDP helpers, xdp_md rewriting), kernel/bpf/arraymap.c,
 * hashtab.c (map errors), Documentation/bpf/map_*.rst. */
#include "device/gpu/gpu_abi.h"

#define RT __attribute__((always_inline)) static inline
#define EXPORT __attribute__((visibility("default")))
#define EINVAL 22
#define ENOENT 2
#define EEXIST 17
#define E2BIG 7
#define EACCES 13
#define ENOSPC 28
#define XDP_ABORTED 0
#define XDP_REDIRECT 4
#define ETH_HLEN 14
#define XDP_FRAME_SIZE 40 /* sizeof(struct xdp_frame), kept before data by adjust_head */
#define TAILROOM 320      /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)), x86-64 */
#define XDP_META_MAX 252  /* xdp_metalen_invalid(): u8 meta_len, 4-aligned (xdp::kMaxMetaLen) */
#define BPF_NOEXIST 1
#define BPF_EXIST 2
#define BPF_F_RDONLY_PROG (1u << 7)
#define BPF_F_BROADCAST (1u << 3)
#define BPF_F_EXCLUDE_INGRESS (1u << 4)

/* vm::Fault values (vm/abi.h). */
enum { F_NONE = 0, F_OOB = 1, F_BUDGET = 2, F_BADINSN = 3, F_DEPTH = 4, F_HELPER = 5, F_CTX = 6 };
/* device::RedirectKind (device/batch.h). */
enum { R_IFINDEX = 1, R_CPU = 2, R_XSK = 3 };

/* BPF_MAP_TYPE_* (linux/bpf.h). */
enum {
  M_HASH = 1,
  M_ARRAY = 2,
  M_PROG_ARRAY = 3,
  M_PERCPU_ARRAY = 6,
  M_LRU_HASH = 9,
  M_LPM_TRIE = 11,
  M_DEVMAP = 14,
  M_CPUMAP = 16,
  M_XSKMAP = 17,
  M_DEVMAP_HASH = 25
};

typedef struct knod_gpu_run run_t;
typedef struct knod_gpu_map map_t;

/* Generated per module by the host (device/gpu/codegen.cpp): calls program `idx`. */
uint64_t knod_gpu_call_prog(uint32_t idx, run_t* run, uint64_t r1, uint64_t r2);

#if defined(__x86_64__)
/* Host simulation (device/gpu/host_sim.cpp): the lane being run, the host clock in ns. */
uint32_t knod_sim_global_id(void);
uint64_t knod_sim_now_ns(void);
#endif

RT uint32_t global_id(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
#elif defined(__AMDGPU__)
  const uint16_t* d = (const uint16_t*)__builtin_amdgcn_dispatch_ptr();
  return __builtin_amdgcn_workgroup_id_x() * d[2] + __builtin_amdgcn_workitem_id_x();
#elif defined(__x86_64__)
  return knod_sim_global_id();
#else
#error "GPU runtime: nvptx64, amdgcn or x86-64 (host simulation) only"
#endif
}

RT uint64_t now_ns(const run_t* run) {
  if (run->args->clock_ns) return run->args->clock_ns;
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_globaltimer();
#elif defined(__x86_64__)
  return knod_sim_now_ns();
#else
  return __builtin_readsteadycounter() * 10; /* 100 MHz constant counter */
#endif
}

/* ---- regions and faults (jit/runtime/rt.h) ---------------------------------------------- */

RT int in_region(uint64_t lo, uint64_t hi, uint64_t addr, uint64_t len) {
  return addr >= lo && len <= hi - lo && addr - lo <= hi - lo - len;
}

EXPORT __attribute__((noinline)) void knod_rt_fault(run_t* run, int32_t reason, uint32_t pc) {
  if (run->fault == F_NONE) {
    run->fault = (uint32_t)reason;
    run->fault_pc = pc;
  }
}

EXPORT _Bool knod_host_static_ok(run_t* run, uint64_t addr, uint64_t len, _Bool write) {
  const struct knod_gpu_args* a = run->args;
  for (uint32_t i = 0; i < a->nmaps; ++i) {
    map_t* m = a->maps[i];
    uint64_t lo = (uint64_t)m + m->values_off;
    if (m->type == 3 /* PROG_ARRAY */) continue;
    /* inside one value: values are value_stride bytes apart (check_map_access's bound) */
    if (in_region(lo, lo + m->values_bytes, addr, len))
      return m->value_stride && (addr - lo) % m->value_stride + len <= m->value_size &&
             (!write || !(m->map_flags & BPF_F_RDONLY_PROG));
  }
  return 0;
}

/* An access through a packet or map value pointer (jit/safety.h AccessInfo::off_stack): any
 * region but the stack's; knod_rt_check leaves none out. */
EXPORT _Bool knod_rt_check_off_stack(run_t* run, uint64_t addr, uint32_t len, _Bool write,
                                     int32_t stack) {
  for (uint32_t i = 0; i < run->nregions; ++i) {
    const struct knod_gpu_region* r = &run->regions[i];
    if ((int32_t)i != stack && in_region(r->lo, r->hi, addr, len) && (!write || r->writable))
      return 1;
  }
  return knod_host_static_ok(run, addr, len, write);
}

EXPORT _Bool knod_rt_check(run_t* run, uint64_t addr, uint32_t len, _Bool write) {
  return knod_rt_check_off_stack(run, addr, len, write, -1);
}

EXPORT _Bool knod_rt_stopped(run_t* run) {
  return run->fault != F_NONE || run->exit_now;
}

EXPORT _Bool knod_rt_tail_pending(run_t* run) {
  return run->tail_target != 0;
}

/* The target program replaces the current frame: it sees the packet (region 0) and its own
 * stack, not the caller's; its r0 becomes the caller's. */
EXPORT _Bool knod_rt_tail_call(run_t* run, uint64_t r1, void* fp, uint32_t depth, int32_t region,
                               uint64_t* r0) {
  (void)fp;
  (void)depth;
  (void)region;
  if (run->tail_calls >= KNOD_GPU_MAX_TAIL_CALLS) {
    run->tail_target = 0;
    return 0;
  }
  run->tail_calls++;
  uint32_t prog = run->tail_target - 1, saved = run->nregions;
  run->tail_target = 0;
  run->nregions = 1;
  *r0 = knod_gpu_call_prog(prog, run, r1, 0);
  run->nregions = saved;
  return 1;
}

EXPORT _Bool knod_rt_budget(run_t* run, uint64_t n, uint32_t pc) {
  run->insns += n;
  if (run->insns <= run->insn_budget) return 0;
  knod_rt_fault(run, F_BUDGET, pc);
  return 1;
}

EXPORT int32_t knod_rt_enter(run_t* run, void* lo, uint32_t bytes) {
  if (run->nregions == KNOD_GPU_MAX_REGIONS) return -1;
  uint64_t a = (uint64_t)lo;
  struct knod_gpu_region* r = &run->regions[run->nregions];
  r->lo = a;
  r->hi = a + bytes;
  r->writable = 1;
  return (int32_t)run->nregions++;
}

/* Each lane's entry allocates its stack (no stack kept from run to run). */
EXPORT uint8_t* knod_rt_stack(run_t* run) {
  (void)run;
  return 0;
}

EXPORT int32_t knod_rt_stack_region(run_t* run) {
  (void)run;
  return -1;
}

/* Sets the stack region's low end (the deepest active frame's bottom). */
EXPORT void knod_rt_frame(run_t* run, int32_t region, void* lo) {
  if (region >= 0 && (uint32_t)region < run->nregions) run->regions[region].lo = (uint64_t)lo;
}

EXPORT void knod_rt_leave(run_t* run, int32_t saved) {
  if (saved >= 0) run->nregions = (uint32_t)saved;
}

/* ---- xdp_md (kernel xdp_convert_ctx_access): 32-bit loads only, read-only -------------- */

RT uint64_t pkt_data(const run_t* run) {
  return (uint64_t)(run->slot + run->data_off);
}

RT void set_packet_region(run_t* run) {
  run->regions[0].lo = pkt_data(run) - run->meta_len;
  run->regions[0].hi = pkt_data(run) + run->data_len;
  run->regions[0].writable = 1;
}

EXPORT uint64_t knod_rt_ctx_load(run_t* run, uint32_t off, uint32_t size, uint32_t pc) {
  if (run->args->mode == KNOD_GPU_MODE_XDP && size == 4) {
    switch (off) {
      case 0:
        return pkt_data(run);
      case 4:
        return pkt_data(run) + run->data_len;
      case 8:
        return pkt_data(run) - run->meta_len;
      case 12:
        return run->md[3];
      case 16:
        return run->md[4];
      case 20:
        return 0; /* egress_ifindex: only for devmap programs */
    }
  }
  knod_rt_fault(run, F_CTX, pc);
  return 0;
}

EXPORT _Bool knod_rt_ctx_ok(run_t* run, uint32_t off, uint32_t size) {
  return run->args->mode == KNOD_GPU_MODE_XDP && size == 4 && off <= 20 && off % 4 == 0;
}

EXPORT uint64_t knod_rt_ctx_field(run_t* run, uint32_t off) {
  return knod_rt_ctx_load(run, off, 4, 0); /* knod_rt_ctx_ok: never the fault */
}

EXPORT uint64_t knod_rt_ctx_slow(run_t* run, uint32_t off, uint32_t size, uint32_t pc) {
  return knod_rt_ctx_load(run, off, size, pc);
}

RT int in_ctx(const run_t* run, uint64_t addr) {
  uint64_t lo = (uint64_t)run->md;
  return run->args->mode == KNOD_GPU_MODE_XDP && addr >= lo && addr < lo + sizeof run->md;
}

EXPORT uint64_t knod_rt_load_slow(run_t* run, uint64_t addr, uint32_t size, uint32_t pc) {
  if (in_ctx(run, addr))
    return knod_rt_ctx_load(run, (uint32_t)(addr - (uint64_t)run->md), size, pc);
  knod_rt_fault(run, F_OOB, pc);
  return 0;
}

EXPORT void knod_rt_store_slow(run_t* run, uint64_t addr, uint32_t size, uint64_t value,
                               uint32_t pc) {
  (void)size;
  (void)value;
  knod_rt_fault(run, in_ctx(run, addr) ? F_CTX : F_OOB, pc); /* xdp_md is read-only */
}

/* ---- maps ------------------------------------------------------------------------------- */

RT map_t* map_arg(run_t* run, uint64_t p) {
  const struct knod_gpu_args* a = run->args;
  for (uint32_t i = 0; i < a->nmaps; ++i)
    if ((uint64_t)a->maps[i] == p) return a->maps[i];
  run->fault = F_HELPER;
  return 0;
}

RT uint8_t* map_values(map_t* m) {
  return (uint8_t*)m + m->values_off;
}
RT uint8_t* map_keys(map_t* m) {
  return (uint8_t*)m + m->keys_off;
}
RT uint32_t* map_state(map_t* m) {
  return (uint32_t*)((uint8_t*)m + m->state_off);
}

RT int key_eq(const uint8_t* a, const uint8_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* FNV-1a over the key bytes; the host uses the same function to place entries. */
RT uint32_t key_hash(const uint8_t* k, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ k[i]) * 16777619u;
  return h;
}

/* Relaxed atomics plus fences: LLVM 19's NVPTX back end selects neither `fence` nor
 * acquire/release loads and stores (and emits cmpxchg as a relaxed atom.cas), so the GPU-wide
 * ordering comes from membar.gl there. */
#if defined(__NVPTX__)
#define FENCE_ACQUIRE() __nvvm_membar_gl()
#define FENCE_RELEASE() __nvvm_membar_gl()
#else
#define FENCE_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define FENCE_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/* Load-acquire / store-release (BPF_LOAD_ACQ, BPF_STORE_REL): the lowered program's fences. */
EXPORT void knod_rt_fence_acquire(void) {
  FENCE_ACQUIRE();
}

EXPORT void knod_rt_fence_release(void) {
  FENCE_RELEASE();
}

/* Before a helper that runs callbacks, or a callx (the host's call_func): none runs here. */
EXPORT void knod_rt_set_caller(run_t* run, uint32_t depth, void* fp, int32_t region) {
  (void)run;
  (void)depth;
  (void)fp;
  (void)region;
}

RT uint32_t load_state(uint32_t* s) {
  uint32_t v = __atomic_load_n(s, __ATOMIC_RELAXED);
  FENCE_ACQUIRE();
  return v;
}

RT int claim_slot(uint32_t* s, uint32_t* expect, uint32_t desired) {
  FENCE_RELEASE();
  int ok = __atomic_compare_exchange_n(s, expect, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  FENCE_ACQUIRE();
  return ok;
}

/* Slot of `key`, or -1. */
RT int64_t hash_find(map_t* m, const uint8_t* key) {
  uint32_t mask = m->nslots - 1, h = key_hash(key, m->key_size);
  for (uint32_t p = 0; p < m->nslots; ++p) {
    uint32_t s = (h + p) & mask;
    uint32_t st = load_state(&map_state(m)[s]);
    if (st == KNOD_SLOT_EMPTY) return -1;
    if (st == KNOD_SLOT_FULL && key_eq(map_keys(m) + (uint64_t)s * m->key_stride, key, m->key_size))
      return s;
  }
  return -1;
}

RT void copy(uint8_t* d, const uint8_t* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = s[i];
}

/* LRU_HASH when full: the first live entry on the new key's probe path is deleted (the
 * kernel evicts from its per-CPU LRU lists; which entry goes differs, the count is the same). */
RT int lru_evict(map_t* m, const uint8_t* key) {
  uint32_t mask = m->nslots - 1, h = key_hash(key, m->key_size);
  for (uint32_t p = 0; p < m->nslots; ++p) {
    uint32_t expect = KNOD_SLOT_FULL;
    if (claim_slot(&map_state(m)[(h + p) & mask], &expect, KNOD_SLOT_DELETED)) return 1;
  }
  return 0;
}

/* ---- LPM_TRIE: entries in slots [0, nslots), scanned for the longest match ---------------
 * Key: u32 prefixlen, then data bytes compared most significant bit first (kernel
 * lpm_trie.c extract_bit). Lookups take the longest entry whose prefix covers the key. */
RT uint32_t lpm_len(const uint8_t* k) {
  return *(const uint32_t*)k;
}

RT int lpm_covers(const uint8_t* e, const uint8_t* key) {
  uint32_t plen = lpm_len(e);
  if (plen > lpm_len(key)) return 0;
  for (uint32_t i = 0; i < plen / 8; ++i)
    if (e[4 + i] != key[4 + i]) return 0;
  uint32_t rem = plen % 8;
  return !rem || !((e[4 + plen / 8] ^ key[4 + plen / 8]) & (uint8_t)(0xff << (8 - rem)));
}

/* Slot of the longest entry covering `key` or, `exact`, of the entry with its prefix; or -1. */
RT int64_t lpm_find(map_t* m, const uint8_t* key, int exact) {
  int64_t best = -1;
  for (uint32_t s = 0; s < m->nslots; ++s) {
    if (load_state(&map_state(m)[s]) != KNOD_SLOT_FULL) continue;
    const uint8_t* e = map_keys(m) + (uint64_t)s * m->key_stride;
    if (!lpm_covers(e, key)) continue;
    if (exact && lpm_len(e) == lpm_len(key)) return s;
    if (!exact && (best < 0 || lpm_len(e) > lpm_len(map_keys(m) + best * m->key_stride))) best = s;
  }
  return exact ? -1 : best;
}

RT void copy(uint8_t* d, const uint8_t* s, uint32_t n);

RT long lpm_update(map_t* m, const uint8_t* key, const uint8_t* value, uint64_t flags) {
  if (lpm_len(key) > (m->key_size - 4) * 8) return -EINVAL;
  int64_t s = lpm_find(m, key, 1);
  if (s >= 0) {
    if (flags == BPF_NOEXIST) return -EEXIST;
    copy(map_values(m) + (uint64_t)s * m->value_stride, value, m->value_size);
    return 0;
  }
  if (flags == BPF_EXIST) return -ENOENT;
  if (__atomic_add_fetch(&m->count, 1, __ATOMIC_RELAXED) > m->max_entries) {
    __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
    return -ENOSPC;
  }
  for (uint32_t i = 0; i < m->nslots; ++i) {
    uint32_t expect = KNOD_SLOT_EMPTY;
    if (claim_slot(&map_state(m)[i], &expect, KNOD_SLOT_BUSY)) {
      copy(map_keys(m) + (uint64_t)i * m->key_stride, key, m->key_size);
      copy(map_values(m) + (uint64_t)i * m->value_stride, value, m->value_size);
      FENCE_RELEASE();
      __atomic_store_n(&map_state(m)[i], KNOD_SLOT_FULL, __ATOMIC_RELAXED);
      return 0;
    }
  }
  __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
  return -ENOSPC;
}

RT long lpm_delete(map_t* m, const uint8_t* key) {
  int64_t s = lpm_find(m, key, 1);
  uint32_t expect = KNOD_SLOT_FULL;
  if (s < 0 || !claim_slot(&map_state(m)[s], &expect, KNOD_SLOT_EMPTY)) return -ENOENT;
  __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
  return 0;
}

RT long hash_update(map_t* m, const uint8_t* key, const uint8_t* value, uint64_t flags) {
  int64_t s = hash_find(m, key);
  if (s >= 0) {
    if (flags == BPF_NOEXIST) return -EEXIST;
    copy(map_values(m) + (uint64_t)s * m->value_stride, value, m->value_size);
    return 0;
  }
  if (flags == BPF_EXIST) return -ENOENT;
  if (__atomic_add_fetch(&m->count, 1, __ATOMIC_RELAXED) > m->max_entries &&
      !(m->type == M_LRU_HASH && lru_evict(m, key))) {
    __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
    return -E2BIG;
  }
  uint32_t mask = m->nslots - 1, h = key_hash(key, m->key_size);
  for (uint32_t p = 0; p < m->nslots; ++p) {
    uint32_t i = (h + p) & mask;
    uint32_t expect = KNOD_SLOT_EMPTY;
    if (claim_slot(&map_state(m)[i], &expect, KNOD_SLOT_BUSY)) {
      copy(map_keys(m) + (uint64_t)i * m->key_stride, key, m->key_size);
      copy(map_values(m) + (uint64_t)i * m->value_stride, value, m->value_size);
      FENCE_RELEASE();
      __atomic_store_n(&map_state(m)[i], KNOD_SLOT_FULL, __ATOMIC_RELAXED);
      return 0;
    }
    /* Another lane inserting the same key at the same time: the later one updates it. */
    if (expect == KNOD_SLOT_FULL &&
        key_eq(map_keys(m) + (uint64_t)i * m->key_stride, key, m->key_size)) {
      __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
      if (flags == BPF_NOEXIST) return -EEXIST;
      copy(map_values(m) + (uint64_t)i * m->value_stride, value, m->value_size);
      return 0;
    }
  }
  __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
  return -E2BIG; /* every slot used or deleted: the host compacts between batches */
}

RT uint64_t map_lookup(run_t* run, uint64_t mp, uint64_t kp) {
  map_t* m = map_arg(run, mp);
  if (!m) return 0;
  if (!knod_rt_check(run, kp, m->key_size, 0)) {
    run->fault = F_HELPER;
    return 0;
  }
  const uint8_t* key = (const uint8_t*)kp;
  switch (m->type) {
    case 2: /* ARRAY */
    case 6: /* PERCPU_ARRAY */ {
      uint32_t idx = *(const uint32_t*)key;
      if (idx >= m->max_entries) return 0;
      uint64_t slot = m->type == 6 ? (uint64_t)(run->cpu % m->ncpus) * m->cpu_slots + idx : idx;
      return (uint64_t)(map_values(m) + slot * m->value_stride);
    }
    case M_HASH:
    case M_LRU_HASH:
    case M_LPM_TRIE: {
      int64_t s = m->type == M_LPM_TRIE ? lpm_find(m, key, 0) : hash_find(m, key);
      return s < 0 ? 0 : (uint64_t)(map_values(m) + (uint64_t)s * m->value_stride);
    }
  }
  return 0; /* DEVMAP(_HASH)/CPUMAP/XSKMAP/PROG_ARRAY: not for lookups from XDP programs */
}

RT uint64_t map_update(run_t* run, uint64_t mp, uint64_t kp, uint64_t vp, uint64_t flags) {
  map_t* m = map_arg(run, mp);
  if (!m) return 0;
  if (!knod_rt_check(run, kp, m->key_size, 0) || !knod_rt_check(run, vp, m->value_size, 0)) {
    run->fault = F_HELPER;
    return 0;
  }
  if (flags > BPF_EXIST) return (uint64_t)-EINVAL;
  const uint8_t* key = (const uint8_t*)kp;
  switch (m->type) {
    case 2:
    case 6: {
      uint32_t idx = *(const uint32_t*)key;
      if (idx >= m->max_entries) return (uint64_t)-E2BIG;
      if (flags == BPF_NOEXIST) return (uint64_t)-EEXIST;
      uint64_t slot = m->type == 6 ? (uint64_t)(run->cpu % m->ncpus) * m->cpu_slots + idx : idx;
      copy(map_values(m) + slot * m->value_stride, (const uint8_t*)vp, m->value_size);
      return 0;
    }
    case M_HASH:
    case M_LRU_HASH:
      return (uint64_t)hash_update(m, key, (const uint8_t*)vp, flags);
    case M_LPM_TRIE:
      return (uint64_t)lpm_update(m, key, (const uint8_t*)vp, flags);
  }
  return (uint64_t)-EINVAL;
}

RT uint64_t map_delete(run_t* run, uint64_t mp, uint64_t kp) {
  map_t* m = map_arg(run, mp);
  if (!m) return 0;
  if (!knod_rt_check(run, kp, m->key_size, 0)) {
    run->fault = F_HELPER;
    return 0;
  }
  if (m->type == M_LPM_TRIE) return (uint64_t)lpm_delete(m, (const uint8_t*)kp);
  if (m->type != M_HASH && m->type != M_LRU_HASH) return (uint64_t)-EINVAL;
  int64_t s = hash_find(m, (const uint8_t*)kp);
  if (s < 0) return (uint64_t)-ENOENT;
  uint32_t expect = KNOD_SLOT_FULL;
  if (!claim_slot(&map_state(m)[s], &expect, KNOD_SLOT_DELETED)) return (uint64_t)-ENOENT;
  __atomic_sub_fetch(&m->count, 1, __ATOMIC_RELAXED);
  return 0;
}

/* ---- XDP helpers (net/core/filter.c) ---------------------------------------------------- */

RT uint64_t adjust_head(run_t* run, int64_t delta) {
  int64_t off = (int64_t)run->data_off + (int32_t)delta;
  if (off < (int64_t)(XDP_FRAME_SIZE + run->meta_len) ||
      off > (int64_t)(run->data_off + run->data_len) - ETH_HLEN)
    return (uint64_t)-EINVAL;
  if (run->meta_len) { /* the metadata moves with the data (memmove) */
    uint8_t* from = run->slot + run->data_off - run->meta_len;
    uint8_t* to = run->slot + off - run->meta_len;
    if (to < from)
      for (uint32_t i = 0; i < run->meta_len; ++i) to[i] = from[i];
    else
      for (uint32_t i = run->meta_len; i-- > 0;) to[i] = from[i];
  }
  run->data_len = (uint32_t)((int64_t)run->data_len - (off - (int64_t)run->data_off));
  run->data_off = (uint32_t)off;
  set_packet_region(run);
  return 0;
}

RT uint64_t adjust_meta(run_t* run, int64_t delta) {
  int64_t meta = (int64_t)run->data_off - run->meta_len + (int32_t)delta;
  if (meta < XDP_FRAME_SIZE || meta > (int64_t)run->data_off) return (uint64_t)-EINVAL;
  uint32_t len = run->data_off - (uint32_t)meta;
  if ((len & 3) || len > XDP_META_MAX) return (uint64_t)-EACCES;
  run->meta_len = len;
  set_packet_region(run);
  return 0;
}

RT uint64_t adjust_tail(run_t* run, int64_t delta) {
  int64_t end = (int64_t)run->data_off + run->data_len + (int32_t)delta;
  if (end > (int64_t)run->args->stride - TAILROOM || end < (int64_t)run->data_off + ETH_HLEN)
    return (uint64_t)-EINVAL;
  for (int64_t i = run->data_off + run->data_len; i < end; ++i) run->slot[i] = 0;
  run->data_len = (uint32_t)(end - run->data_off);
  set_packet_region(run);
  return 0;
}

RT uint64_t redirect(run_t* run, uint64_t ifindex, uint64_t flags) {
  if (flags) return XDP_ABORTED;
  run->redirect = ((uint64_t)R_IFINDEX << 56) | (uint32_t)ifindex;
  return XDP_REDIRECT;
}

/* DEVMAP/CPUMAP/XSKMAP images keep a presence word in the last 8 bytes of each slot. */
RT uint64_t redirect_map(run_t* run, uint64_t mp, uint64_t key, uint64_t flags) {
  map_t* m = map_arg(run, mp);
  if (!m) return 0;
  uint32_t kind = m->type == M_DEVMAP || m->type == M_DEVMAP_HASH ? R_IFINDEX
                  : m->type == M_CPUMAP                           ? R_CPU
                  : m->type == M_XSKMAP                           ? R_XSK
                                                                  : 0;
  if (!kind) {
    run->fault = F_HELPER; /* verifier: map type not allowed for redirect_map */
    return 0;
  }
  uint64_t allowed = 3 | (kind == R_IFINDEX ? BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS : 0);
  if (flags & ~allowed) return XDP_ABORTED;
  if (flags & BPF_F_BROADCAST) {
    run->fault = F_HELPER; /* broadcast: refused at load time on GPUs (not implemented) */
    return 0;
  }
  uint32_t k = (uint32_t)key;
  const uint8_t* slot = 0;
  if (m->type == M_DEVMAP_HASH) { /* hash layout: a FULL slot is a present entry */
    int64_t s = hash_find(m, (const uint8_t*)&k);
    slot = s < 0 ? 0 : map_values(m) + (uint64_t)s * m->value_stride;
  } else if (k < m->max_entries &&
             *(const uint32_t*)(map_values(m) + (uint64_t)k * m->value_stride + m->value_stride -
                                8)) {
    slot = map_values(m) + (uint64_t)k * m->value_stride;
  }
  if (!slot) {
    run->redirect = 0;
    return flags & 3; /* lookup failed: the action in the low bits */
  }
  uint32_t value = kind == R_IFINDEX ? *(const uint32_t*)slot : k;
  run->redirect = ((uint64_t)kind << 56) | value;
  return XDP_REDIRECT;
}

/* bpf_csum_diff: ones'-complement sum of ~from and to words (sizes multiple of 4, <= 512 B
 * together), folded to 32 bits as x86-64 csum_partial does. */
RT uint64_t csum_diff(run_t* run, uint64_t from, uint64_t fsz, uint64_t to, uint64_t tsz,
                      uint64_t seed) {
  if (((fsz | tsz) & 3) || fsz + tsz > 512) return (uint64_t)-EINVAL;
  if ((fsz && !knod_rt_check(run, from, (uint32_t)fsz, 0)) ||
      (tsz && !knod_rt_check(run, to, (uint32_t)tsz, 0))) {
    run->fault = F_HELPER;
    return 0;
  }
  uint64_t acc = (uint32_t)seed;
  for (uint64_t i = 0; i < fsz; i += 4) {
    const uint8_t* p = (const uint8_t*)from + i;
    acc += (uint32_t) ~(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
  }
  for (uint64_t i = 0; i < tsz; i += 4) {
    const uint8_t* p = (const uint8_t*)to + i;
    acc += (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
  }
  while (acc >> 32) acc = (acc >> 32) + (acc & 0xffffffffu);
  return acc;
}

RT uint64_t tail_call(run_t* run, uint64_t mp, uint64_t index) {
  map_t* m = map_arg(run, mp);
  if (!m) return 0;
  if (m->type != 3) {
    run->fault = F_HELPER;
    return 0;
  }
  uint32_t i = (uint32_t)index;
  if (i >= m->max_entries) return (uint64_t)-ENOENT;
  uint32_t prog = *(const uint32_t*)(map_values(m) + (uint64_t)i * m->value_stride);
  if (!prog) return (uint64_t)-ENOENT;
  run->tail_target = prog; /* knod_rt_tail_call counts and runs it */
  return 0;
}

/* splitmix64 over (seed, packet index, draw): independent per lane, reproducible per batch. */
RT uint64_t prandom(run_t* run) {
  uint64_t z = run->prng += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)(z ^ (z >> 31));
}

EXPORT uint64_t knod_rt_helper(run_t* run, int32_t id, uint64_t r1, uint64_t r2, uint64_t r3,
                               uint64_t r4, uint64_t r5, uint32_t pc) {
  uint64_t r0 = 0;
  switch (id) {
    case 1:
      r0 = map_lookup(run, r1, r2);
      break;
    case 2:
      r0 = map_update(run, r1, r2, r3, r4);
      break;
    case 3:
      r0 = map_delete(run, r1, r2);
      break;
    case 5:
      if (run->args->mode == KNOD_GPU_MODE_RAW) { /* the conformance plugin's "unwind" */
        if (r1 == 0) run->exit_now = 1;
        r0 = r1;
        break;
      }
      r0 = now_ns(run);
      break;
    case 125:
    case 160:
      r0 = now_ns(run);
      break;
    case 7:
      r0 = prandom(run);
      break;
    case 8:
      r0 = run->cpu;
      break;
    case 12:
      r0 = tail_call(run, r2, r3);
      break;
    case 23:
      r0 = redirect(run, r1, r2);
      break;
    case 28:
      r0 = csum_diff(run, r1, r2, r3, r4, r5);
      break;
    case 44:
      r0 = adjust_head(run, (int64_t)r2);
      break;
    case 51:
      r0 = redirect_map(run, r1, r2, r3);
      break;
    case 54:
      r0 = adjust_meta(run, (int64_t)r2);
      break;
    case 65:
      r0 = adjust_tail(run, (int64_t)r2);
      break;
    default:
      run->fault = F_HELPER; /* refused at load time (codegen) */
  }
  if (run->fault != F_NONE && run->fault_pc == 0) run->fault_pc = pc;
  return r0;
}

/* bpf_xdp_adjust_head / adjust_meta with r1 the ctx (jit/safety.h kXdpAdjust): the CPU
 * runtime calls xdp::Buff's code directly; here the helper does the same work. */
EXPORT uint64_t knod_rt_xdp_adjust(run_t* run, int32_t id, uint64_t r1, uint64_t r2, uint32_t pc) {
  return knod_rt_helper(run, id, r1, r2, 0, 0, 0, pc);
}

/* callx (RFC 9669 v4): a helper id calls the helper; BPF_PSEUDO_FUNC values (callbacks)
 * are not supported on GPUs yet and fault. */
EXPORT uint64_t knod_rt_callx(run_t* run, uint64_t target, uint64_t r1, uint64_t r2, uint64_t r3,
                              uint64_t r4, uint64_t r5, uint32_t pc) {
  if (target < 256) return knod_rt_helper(run, (int32_t)target, r1, r2, r3, r4, r5, pc);
  knod_rt_fault(run, F_HELPER, pc);
  return 0;
}

/* ---- the batch entries: one packet per lane -------------------------------------------- */

/* Runs packet i of batch `a` (lane state, program, verdict and outputs). Both entries. */
static void run_packet(const struct knod_gpu_args* a, uint32_t i) {
  run_t run;
  __builtin_memset(&run, 0, sizeof run);
  run.args = a;
  run.index = i;
  run.cpu = a->ncpus ? i % a->ncpus : 0;
  run.insn_budget = a->insn_budget;
  run.prng = a->seed ^ ((uint64_t)i * 0xd1b54a32d192ed03ull);
  run.slot = a->frames + (uint64_t)i * a->stride;
  run.data_off = a->data_off[i];
  run.data_len = a->data_len[i];
  run.meta_len = a->meta_len ? a->meta_len[i] : 0;
  run.md[4] = a->rx_queue_index ? a->rx_queue_index[i] : 0;
  run.md[3] = a->ingress_ifindex ? a->ingress_ifindex[i] : 1; /* loopback, as test_run */
  run.nregions = 1;
  set_packet_region(&run);
  /* A slot whose layout is impossible aborts without running (as xdp::Runtime). */
  uint64_t r0 = 0;
  if (a->stride <= TAILROOM || run.meta_len > run.data_off ||
      (uint64_t)run.data_off + run.data_len > a->stride - TAILROOM) {
    run.fault = F_OOB;
  } else {
    uint64_t r1, r2 = 0;
    if (a->mode == KNOD_GPU_MODE_RAW) {
      r1 = run.data_len ? pkt_data(&run) : 0; /* no memory: r1 = 0, as the CPU runner */
      r2 = run.data_len;
    } else {
      r1 = (uint64_t)run.md;
    }
    r0 = knod_gpu_call_prog(a->entry, &run, r1, r2);
  }
  if (run.fault != F_NONE) r0 = 0;
  if (a->ret) a->ret[i] = r0;
  uint32_t verdict =
      run.fault != F_NONE || (uint32_t)r0 > XDP_REDIRECT ? XDP_ABORTED : (uint32_t)r0;
  a->verdict[i] = verdict;
  a->redirect[i] = verdict == XDP_REDIRECT ? run.redirect : 0;
  a->fault[i] = (uint8_t)run.fault;
  if (run.fault == F_NONE) { /* on a fault the input layout stays */
    a->data_off[i] = run.data_off;
    a->data_len[i] = run.data_len;
    if (a->meta_len) a->meta_len[i] = run.meta_len;
  }
}

#if defined(__x86_64__)
/* Host simulation: packet i of the batch in mailbox slot `slot` starts/ends; the host runs
 * the packets of a persistent session in order (its results are then exactly the CPU's)
 * while the ring runs concurrently. */
void knod_sim_lane_begin(uint32_t slot, uint32_t i);
void knod_sim_lane_end(uint32_t slot, uint32_t i);
#endif

/* run_packet; `slot` >= 0: a persistent kernel's mailbox slot (the simulation's ordering). */
static void run_lane_packet(const struct knod_gpu_args* a, uint32_t i, int32_t slot) {
#if defined(__x86_64__)
  if (slot >= 0) knod_sim_lane_begin((uint32_t)slot, i);
  run_packet(a, i);
  if (slot >= 0) knod_sim_lane_end((uint32_t)slot, i);
#else
  (void)slot;
  run_packet(a, i);
#endif
}

/* Lane `first` of `lanes` runs its packets of batch `a`, in packet order. Without per-CPU
 * maps: packets first, first + lanes, ... With them: the packets of virtual CPUs first,
 * first + lanes, ... (packet i is CPU i % ncpus), so no two lanes ever share a CPU. */
static void run_lanes(const struct knod_gpu_args* a, uint32_t first, uint32_t lanes, int32_t slot) {
  if (!a->ncpus) {
    for (uint64_t i = first; i < a->count; i += lanes) run_lane_packet(a, (uint32_t)i, slot);
    return;
  }
  for (uint64_t base = 0; base < a->count; base += a->ncpus)
    for (uint64_t c = first; c < a->ncpus && base + c < a->count; c += lanes)
      run_lane_packet(a, (uint32_t)(base + c), slot);
}

/* One launch per batch: a->lanes lanes (lanes_for: count, or min(count, ncpus)). */
EXPORT void knod_gpu_entry(const struct knod_gpu_args* a) {
  uint32_t i = global_id();
  if (i < a->lanes) run_lanes(a, i, a->lanes, -1);
}

/* ---- the persistent entry: a resident grid fed through the mailbox ring (gpu_abi.h) ----- */

#if defined(__x86_64__)
/* Host simulation: one lane per simulated block, one host thread per block. */
uint32_t knod_sim_block_id(void);
uint32_t knod_sim_nblocks(void);
void knod_sim_pause(void);
#endif

RT uint32_t block_id(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_ctaid_x();
#elif defined(__AMDGPU__)
  return __builtin_amdgcn_workgroup_id_x();
#else
  return knod_sim_block_id();
#endif
}

RT uint32_t thread_in_block(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_tid_x();
#elif defined(__AMDGPU__)
  return __builtin_amdgcn_workitem_id_x();
#else
  return 0;
#endif
}

RT uint32_t block_dim(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_ntid_x();
#elif defined(__AMDGPU__)
  return ((const uint16_t*)__builtin_amdgcn_dispatch_ptr())[2]; /* workgroup_size_x */
#else
  return 1;
#endif
}

RT uint32_t grid_blocks(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_nctaid_x();
#elif defined(__AMDGPU__)
  /* hsa_kernel_dispatch_packet_t.grid_size_x (work-items, byte offset 12) / workgroup size */
  uint32_t grid = *(const uint32_t*)((const uint8_t*)__builtin_amdgcn_dispatch_ptr() + 12);
  return (grid + block_dim() - 1) / block_dim();
#else
  return knod_sim_nblocks();
#endif
}

/* Every thread of the block waits here; block-scope ordering of their memory operations. */
RT void block_barrier(void) {
#if defined(__NVPTX__)
  __nvvm_bar_sync(0);
#elif defined(__AMDGPU__)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#endif
}

/* System scope (host included): membar.sys / fence seq_cst system / the host's own fence. */
RT void fence_system(void) {
#if defined(__NVPTX__)
  __nvvm_membar_sys();
#elif defined(__AMDGPU__)
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

RT void pause_polling(void) {
#if defined(__NVPTX__)
  __asm__ volatile("nanosleep.u32 256;");
#elif defined(__AMDGPU__)
  __builtin_amdgcn_s_sleep(2);
#else
  knod_sim_pause();
#endif
}

/* Thread 0 of the block: waits for batch `seq` (or EXIT) in `s`; returns the state seen. */
RT uint32_t wait_slot(struct knod_gpu_mailbox_slot* s, uint64_t seq) {
  for (;;) {
    uint32_t st = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
    if (st == KNOD_MB_EXIT || st == KNOD_MB_READY) {
      fence_system();
      if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq) return st;
    }
    pause_polling();
  }
}

/* The persistent kernel: waits for slot after slot, runs its batch with every lane of the
 * grid, the last block to finish marks it DONE; returns on EXIT (see gpu_abi.h). */
EXPORT void knod_gpu_persistent(struct knod_gpu_mailbox* mb) {
  const uint32_t tid = thread_in_block(), lanes = grid_blocks() * block_dim();
  for (uint64_t seq = 0;; ++seq) {
    uint32_t k = (uint32_t)(seq % KNOD_GPU_MAILBOX_DEPTH);
    struct knod_gpu_mailbox_slot* s = &mb->slot[k];
    if (tid == 0) wait_slot(s, seq);
    block_barrier();
    /* Thread 0 saw READY or EXIT for this batch; the state cannot leave READY before this
     * block counts the slot done, and EXIT is final: every thread reads the same. */
    if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) == KNOD_MB_EXIT) return;
    fence_system(); /* every thread: the batch the host wrote before READY is visible */
    struct knod_gpu_args a = s->args; /* read once: host memory on a GPU */
    run_lanes(&a, block_id() * block_dim() + tid, lanes, (int32_t)k);
    block_barrier(); /* the block's results written, the state read by all */
    if (tid == 0) {
      fence_system();
      if (__atomic_fetch_add(&mb->block_done[k], 1, __ATOMIC_RELAXED) + 1 == mb->nblocks) {
        __atomic_store_n(&mb->block_done[k], 0, __ATOMIC_RELAXED);
        fence_system();
        __atomic_store_n(&s->state, KNOD_MB_DONE, __ATOMIC_RELAXED);
      }
    }
  }
}
