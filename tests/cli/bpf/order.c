// Fixture for `knod run`: stamps each packet with its CPU's running count (PERCPU_ARRAY) and
// the CPU: bytes 0-1 the count (little-endian), byte 2 the CPU. One CPU takes its packets in
// capture order, so each CPU's counts rise by one along the capture.
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 1);
} seq SEC(".maps");

SEC("xdp")
int xdp_order(struct xdp_md* ctx) {
  __u32 k = 0, *v = bpf_map_lookup_elem(&seq, &k);
  unsigned char *d = (void*)(long)ctx->data, *e = (void*)(long)ctx->data_end;
  if (!v || d + 3 > e) return XDP_ABORTED;
  *v += 1;
  d[0] = *v;
  d[1] = *v >> 8;
  d[2] = bpf_get_smp_processor_id();
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
