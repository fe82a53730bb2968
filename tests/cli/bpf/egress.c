// Fixture for `knod bench --vs-kernel`: the kernel refuses it late (xdp_md->egress_ifindex
// outside a devmap program: "invalid bpf_context access off=20 size=4"), after a verifier
// log of over a KiB, which libbpf hands over as one message.
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} seen SEC(".maps");

SEC("xdp")
int xdp_egress(struct xdp_md* ctx) {
  __u32 k = 0;
  __u64* v = bpf_map_lookup_elem(&seen, &k);
  if (v) *v = ctx->ingress_ifindex;
  k = 1;
  v = bpf_map_lookup_elem(&seen, &k);
  if (v) *v = ctx->rx_queue_index;
  k = 2;
  v = bpf_map_lookup_elem(&seen, &k);
  if (v) *v = ctx->egress_ifindex;
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
