// A HASH declared with max_entries 0: the loader must ask for its size.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);
  __type(value, __u32);
} sized_later SEC(".maps");

SEC("xdp")
int xdp_zero(struct xdp_md* ctx) {
  __u32 k = 1;
  __u32* v = bpf_map_lookup_elem(&sized_later, &k);
  return v ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
