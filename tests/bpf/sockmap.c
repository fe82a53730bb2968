// A map type knod does not run (SOCKMAP): the load error must name the object file.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_SOCKMAP);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u32);
} socks SEC(".maps");

SEC("xdp")
int xdp_socks(struct xdp_md* ctx) {
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
