// Fixture for `knod run --tap A --tap B`: a two-port patch panel as samples/bpf's
// xdp_redirect_map: every frame goes out of the port tx_port maps its ingress ifindex to
// (bpf_redirect_map on a DEVMAP); a port with no entry passes the frame (XDP_PASS).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __type(key, __u32);    // ingress ifindex
  __type(value, __u32);  // egress ifindex
  __uint(max_entries, 16);
} tx_port SEC(".maps");

SEC("xdp")
int xdp_patch_panel(struct xdp_md* ctx) {
  return bpf_redirect_map(&tx_port, ctx->ingress_ifindex, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
