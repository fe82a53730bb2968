// Fixture for `knod prog/map` and `knod run --max-entries`: two XDP programs, three map
// types (bpftool names: hash, percpu_array, lpm_trie), one map sized at load time.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct lpm_v4 {
  __u32 prefixlen;
  __u32 addr;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);
  __type(value, __u64);
  __uint(max_entries, 16);
} counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, __u64);
  __uint(max_entries, 4);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __type(key, struct lpm_v4);
  __type(value, __u32);
  __uint(max_entries, 0);  // sized at load time: --max-entries routes=N
  __uint(map_flags, BPF_F_NO_PREALLOC);
} routes SEC(".maps");

/// Counts packets in counts[0] (created on the first packet) and passes them.
SEC("xdp")
int xdp_count(struct xdp_md *ctx) {
  __u32 key = 0;
  __u64 one = 1, *v = bpf_map_lookup_elem(&counts, &key);
  if (v)
    __sync_fetch_and_add(v, 1);
  else
    bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
  return XDP_PASS;
}

/// Drops packets when routes holds 0.0.0.0/0, counting them in stats[1].
SEC("xdp.frags")
int xdp_route(struct xdp_md *ctx) {
  struct lpm_v4 k = {32, 0};
  __u32 idx = 1;
  if (!bpf_map_lookup_elem(&routes, &k)) return XDP_PASS;
  __u64 *n = bpf_map_lookup_elem(&stats, &idx);
  if (n) *n += 1;
  return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
