// A kfunc declared `extern ... __ksym`: knod cannot resolve it, so loading must fail naming it.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md* ctx, __u32* hash, void* rss_type) __ksym;

SEC("xdp")
int xdp_kfunc(struct xdp_md* ctx) {
  __u32 h = 0;
  bpf_xdp_metadata_rx_hash(ctx, &h, 0);
  return h ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
