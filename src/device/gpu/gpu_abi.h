/* The GPU-side ABI shared by the host (C++: device/cuda, device/amdgpu) and the GPU runtime
 * (runtime.c, compiled to nvptx64/amdgcn bitcode): the kernel argument block, the per-packet
 * run state, the flat device map layout and the persistent kernel's mailbox ring. Plain C so both
 * sides see the same layout. Helper/map numbers are linux/bpf.h's (BPF_FUNC_*, BPF_MAP_TYPE_*). */
#ifndef KNOD_DEVICE_GPU_GPU_ABI_H
#define KNOD_DEVICE_GPU_GPU_ABI_H

#ifdef __cplusplus
#include <cstdint>
extern "C" {
#else
#include <stdint.h>
#endif

/* Helpers the GPU runtime implements: X(id, name) with linux/bpf.h BPF_FUNC_ ids. A program
 * calling any other helper fails to load ("helper bpf_<name> (<id>) not supported on ..."). */
#define KNOD_GPU_HELPERS(X)  \
  X(1, map_lookup_elem)      \
  X(2, map_update_elem)      \
  X(3, map_delete_elem)      \
  X(5, ktime_get_ns)         \
  X(7, get_prandom_u32)      \
  X(8, get_smp_processor_id) \
  X(12, tail_call)           \
  X(23, redirect)            \
  X(28, csum_diff)           \
  X(44, xdp_adjust_head)     \
  X(51, redirect_map)        \
  X(54, xdp_adjust_meta)     \
  X(65, xdp_adjust_tail)     \
  X(125, ktime_get_boot_ns)  \
  X(160, ktime_get_coarse_ns)

/* Map types with a device layout: X(type, name) (BPF_MAP_TYPE_*). */
#define KNOD_GPU_MAP_TYPES(X) \
  X(1, HASH)                  \
  X(2, ARRAY)                 \
  X(3, PROG_ARRAY)            \
  X(6, PERCPU_ARRAY)          \
  X(9, LRU_HASH)              \
  X(11, LPM_TRIE)             \
  X(14, DEVMAP)               \
  X(16, CPUMAP)               \
  X(17, XSKMAP)               \
  X(25, DEVMAP_HASH)

/* Hash slot states (knod_gpu_map.state_off array, one uint32_t per slot). */
enum { KNOD_SLOT_EMPTY = 0, KNOD_SLOT_BUSY = 1, KNOD_SLOT_FULL = 2, KNOD_SLOT_DELETED = 3 };

/* One map in device memory: this header, then flat arrays at the given byte offsets from the
 * header. ARRAY/DEVMAP/CPUMAP/XSKMAP/PROG_ARRAY: values[max_entries] (value_stride bytes
 * each; PROG_ARRAY holds uint32_t program index + 1, 0 = empty; DEVMAP/CPUMAP/XSKMAP entries
 * slots end with an 8-byte presence word, nonzero = entry present). PERCPU_ARRAY:
 * values[ncpus][cpu_slots] (the host pool's layout, maps/array.h: cpu_slots >= max_entries). HASH:
 * open addressing over nslots (power of two >= 2 * max_entries): state[nslots], keys[nslots]
 * (key_stride bytes), values[nslots]; insert claims an EMPTY slot with an atomic compare-and-swap
 * (EMPTY → BUSY), writes key and value, then publishes FULL. LRU_HASH and DEVMAP_HASH (read-only on
 * the device) use the HASH layout. LPM_TRIE: the same three arrays with nslots = max_entries, no
 * hashing: lookups scan for the longest prefix. */
struct knod_gpu_map {
  uint32_t type, key_size, value_size, max_entries;
  uint32_t map_flags;
  uint32_t value_stride; /* round_up(value_size, 8) bytes */
  uint32_t key_stride;   /* round_up(key_size, 8) bytes */
  uint32_t ncpus;        /* per-CPU slots (PERCPU_ARRAY) */
  uint32_t nslots;       /* HASH slots */
  uint32_t count;        /* HASH live entries (atomic) */
  uint32_t cpu_slots;    /* PERCPU_ARRAY value slots per CPU */
  uint32_t reserved;
  uint64_t state_off, keys_off, values_off; /* bytes from the header */
  uint64_t values_bytes; /* size of the value array (a static region of every run) */
  uint64_t bytes;        /* header + arrays */
};

/* Kernel arguments: one block per launch (device addresses). */
struct knod_gpu_args {
  uint32_t count;  /* packets */
  uint32_t stride; /* bytes per packet slot */
  uint32_t mode;   /* KNOD_GPU_MODE_* */
  uint32_t nmaps;
  uint8_t* frames;
  uint32_t* data_off;
  uint32_t* data_len;
  uint32_t* meta_len;
  uint32_t* ingress_ifindex;
  uint32_t* rx_queue_index;
  uint32_t* verdict;
  uint64_t* redirect;
  uint8_t* fault;
  uint64_t* ret;              /* KNOD_GPU_MODE_RAW: r0 of each run (may be 0 in XDP mode) */
  struct knod_gpu_map** maps; /* nmaps device map headers */
  uint64_t clock_ns;          /* pinned clock for ktime helpers; 0 = GPU global timer */
  uint64_t seed;              /* bpf_get_prandom_u32 seed */
  uint64_t insn_budget;       /* instructions per run */
  uint32_t ncpus;             /* per-CPU maps' virtual CPUs, 0 if the maps have none: packet
                                 i runs as CPU i % ncpus, and each virtual CPU is one lane
                                 that runs its packets in order, so plain read-modify-writes
                                 of a per-CPU value never overlap (the kernel's per-CPU
                                 guarantee); the launch needs only min(count, ncpus) lanes */
  uint32_t entry;             /* program index of the entry program */
  uint32_t lanes;             /* threads launched (the one-launch entry's stride) */
};

enum {
  KNOD_GPU_MODE_XDP = 0, /* r1 = xdp_md of the packet */
  KNOD_GPU_MODE_RAW = 1  /* r1 = packet bytes, r2 = their length (conformance suite) */
};

#define KNOD_GPU_MAX_REGIONS 8
#define KNOD_GPU_MAX_TAIL_CALLS 33

struct knod_gpu_region {
  uint64_t lo, hi;
  uint32_t writable, pad;
};

/* Per-packet run state: what `ptr %run` of the lowered program points to on a GPU. */
struct knod_gpu_run {
  const struct knod_gpu_args* args;
  struct knod_gpu_region regions[KNOD_GPU_MAX_REGIONS]; /* [0] = packet (+meta) */
  uint32_t nregions;
  uint32_t fault, fault_pc;
  uint32_t exit_now;
  uint32_t tail_target; /* program index + 1 of a pending tail call, 0 = none */
  uint32_t tail_calls;
  uint32_t cpu;
  uint32_t index; /* packet index */
  uint64_t insns, insn_budget;
  uint64_t prng;
  uint64_t redirect; /* device::redirect_encode(...) */
  uint8_t* slot;     /* frames + index * stride */
  uint32_t data_off, data_len, meta_len, pad;
  uint32_t md[6]; /* stand-in xdp_md object: r1 points here; loads go to ctx_load */
};

/* ---- persistent mode: a resident kernel fed through a mailbox ring --------------------------
 * knod_xdp_persistent(mb) (runtime.c knod_gpu_persistent) stays resident and runs the batches
 * the host posts in a ring of KNOD_GPU_MAILBOX_DEPTH slots in host-visible memory (CUDA:
 * cuMemHostAlloc DEVICEMAP; gpusim: host memory). Batch s (s = 0, 1, ...) goes to slot
 * s % KNOD_GPU_MAILBOX_DEPTH; every block visits the slots in that order.
 *
 * Slot states (knod_gpu_mailbox_slot.state) and who writes them:
 *   FREE  -> READY  host: writes args and seq = s, then (release: x86-64 store order /
 *                   std::atomic release store) state = READY.
 *   READY -> DONE   device: each block waits until state == READY and seq == its batch
 *                   number, reads args (acquire: system fence after the load), runs lanes
 *                   i = global id, i += total lanes, block barrier; one thread per block then
 *                   does a system-scope fence and adds 1 to block_done[slot] (device memory);
 *                   the block that brings it to nblocks resets it to 0, fences (system scope)
 *                   and stores state = DONE: every result the batch wrote is visible to the
 *                   host before DONE is.
 *   DONE  -> FREE   host: (acquire load of DONE) reads the results, then state = FREE.
 *   FREE  -> EXIT   host (stop, no batch in flight): seq = s, state = EXIT; every block is
 *                   then waiting on that slot and returns.
 * Blocks never wait for each other: a block that finished slot k may start slot k + 1 while
 * others still run slot k, so the grid must be resident as a whole (the host sizes it). */
#define KNOD_GPU_MAILBOX_DEPTH 3

enum { KNOD_MB_FREE = 0, KNOD_MB_READY = 1, KNOD_MB_DONE = 2, KNOD_MB_EXIT = 3 };

struct knod_gpu_mailbox_slot {
  uint32_t state; /* KNOD_MB_*: see above (host and device, atomic) */
  uint32_t pad;
  uint64_t seq;              /* host: batch number s of the posted batch or EXIT */
  struct knod_gpu_args args; /* host: the batch (device addresses) */
};

struct knod_gpu_mailbox {
  struct knod_gpu_mailbox_slot slot[KNOD_GPU_MAILBOX_DEPTH];
  uint32_t* block_done; /* device memory, KNOD_GPU_MAILBOX_DEPTH counters, zero at launch */
  uint32_t nblocks;     /* blocks of the persistent grid (host, before launch) */
  uint32_t pad;
};

#ifdef __cplusplus
}
#endif
#endif
