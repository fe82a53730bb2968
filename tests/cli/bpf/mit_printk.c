// Fixture: an XDP program under the MIT license calling bpf_trace_printk, which the kernel
// allows only to GPL-compatible programs (bpf_trace_printk_proto.gpl_only).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_mit_printk(struct xdp_md *ctx) {
  bpf_printk("len %d", ctx->data_end - ctx->data);
  return XDP_PASS;
}

char _license[] SEC("license") = "MIT";
