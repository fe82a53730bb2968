// A BTF map definition whose __uint(key_size, 8) and __type(key, __u32) disagree: libbpf
// refuses it ("map 'conflict': conflicting key size 8 != 4.").
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __uint(key_size, 8);
  __type(key, __u32);
  __type(value, __u64);
} conflict SEC(".maps");

SEC("xdp")
int xdp_conflict(struct xdp_md* ctx) {
  __u32 k = 0;
  return bpf_map_lookup_elem(&conflict, &k) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
