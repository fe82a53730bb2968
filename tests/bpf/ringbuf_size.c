// A RINGBUF of 5000 bytes: libbpf (adjust_ringbuf_sz) creates it with the smallest
// power-of-2 multiple of the page size above that (8192 with 4 KiB pages), as `bpftool map
// show` reports; a CPUMAP declared with max_entries 0, which libbpf does not size itself.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 5000);
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_CPUMAP);
  __type(key, __u32);
  __type(value, struct bpf_cpumap_val);
} cpus SEC(".maps");

SEC("xdp")
int xdp_ring(struct xdp_md* ctx) {
  bpf_ringbuf_output(&events, &ctx->rx_queue_index, 4, 0);
  return bpf_redirect_map(&cpus, 0, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
