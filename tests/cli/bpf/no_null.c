// Fixture: dereferences a bpf_map_lookup_elem result without the NULL test. The kernel's
// verifier refuses it ("R0 invalid mem access 'map_value_or_null'").
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} h SEC(".maps");

SEC("xdp")
int xdp_no_null(struct xdp_md *ctx) {
  __u32 k = 1;
  __u64 *v = bpf_map_lookup_elem(&h, &k);
  return *v ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
