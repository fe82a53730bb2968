// Fixture for `knod run`: reads a headroom byte after bpf_xdp_adjust_head(-16) and leaves 0xab
// there. BPF_PROG_TEST_RUN gives every packet a zeroed headroom, so every verdict is XDP_PASS,
// whatever slot a packet reuses (XDP_DROP: a byte left by an earlier packet).
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_headroom(struct xdp_md* ctx) {
  if (bpf_xdp_adjust_head(ctx, -16)) return XDP_ABORTED;
  unsigned char *d = (void*)(long)ctx->data, *e = (void*)(long)ctx->data_end;
  if (d + 16 > e) return XDP_ABORTED;
  int seen = d[0];
  d[0] = 0xab;
  if (bpf_xdp_adjust_head(ctx, 16)) return XDP_ABORTED;
  return seen ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
