// Fixture: an XDP program calling helper id 999, which no kernel defines.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static long (*const no_such_helper)(void) = (void *)999;

SEC("xdp")
int xdp_bad_helper(struct xdp_md *ctx) {
  return no_such_helper() ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
