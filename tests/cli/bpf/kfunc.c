// Fixture: an XDP program calling a kernel function (kfunc), which knod cannot run.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
                                    __u32 *rss_type) __ksym;

SEC("xdp")
int xdp_kfunc(struct xdp_md *ctx) {
  __u32 hash = 0, type = 0;
  bpf_xdp_metadata_rx_hash(ctx, &hash, &type);
  return hash ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
