// A BTF map definition with pinning 5: libbpf refuses it ("map 'pinned': invalid pinning
// value 5."; only LIBBPF_PIN_NONE 0 and LIBBPF_PIN_BY_NAME 1 exist).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
  __uint(pinning, 5);
} pinned SEC(".maps");

SEC("xdp")
int xdp_pinned(struct xdp_md* ctx) {
  __u32 k = 0;
  return bpf_map_lookup_elem(&pinned, &k) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
