// BTF-defined maps of several types, a map-in-map with an inner template and an initial value,
// a PROG_ARRAY initialised with a program, and a PERF_EVENT_ARRAY with max_entries 0.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct pair {
  __u32 a;
  __u64 b;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, struct pair);
} counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} stats SEC(".maps");

struct lpm_key {
  __u32 prefixlen;
  __u8 addr[4];
};

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, 16);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lpm_key);
  __type(value, __u32);
} routes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} perf SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __uint(max_entries, 8);
  __type(key, __u32);
  __type(value, struct bpf_devmap_val);
} ports SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_QUEUE);
  __uint(max_entries, 8);
  __type(value, __u32);
} fifo SEC(".maps");

struct inner_arr {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} inner_a SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 4);
  __type(key, __u32);
  __array(values, struct inner_arr);
} outer SEC(".maps") = {
    .values = {[2] = &inner_a},
};

SEC("xdp")
int xdp_tail(struct xdp_md* ctx) { return XDP_DROP; }

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 3);
  __uint(key_size, sizeof(__u32));
  __array(values, int(void*));
} jumps SEC(".maps") = {
    .values = {[1] = (void*)&xdp_tail},
};

SEC("xdp")
int xdp_maps(struct xdp_md* ctx) {
  __u32 k = 0;
  struct pair* p = bpf_map_lookup_elem(&counts, &k);
  if (p) p->b++;
  __u64* s = bpf_map_lookup_elem(&stats, &k);
  if (s) (*s)++;
  struct lpm_key lk = {32, {10, 0, 0, 1}};
  __u32* r = bpf_map_lookup_elem(&routes, &lk);
  if (r) k = *r;
  bpf_ringbuf_output(&events, &k, sizeof k, 0);
  bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, &k, sizeof k);
  bpf_map_push_elem(&fifo, &k, 0);
  void* in = bpf_map_lookup_elem(&outer, &k);
  if (in) bpf_map_lookup_elem(in, &k);
  bpf_tail_call(ctx, &jumps, 1);
  return bpf_redirect_map(&ports, k & 7, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
