// One tiny program per section name, to check prog_type as libbpf's section table gives it.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp.frags") int p_frags(struct xdp_md* ctx) { return XDP_PASS; }
SEC("xdp/devmap") int p_devmap(struct xdp_md* ctx) { return XDP_PASS; }
SEC("xdp/cpumap") int p_cpumap(struct xdp_md* ctx) { return XDP_PASS; }
SEC("tc") int p_tc(struct __sk_buff* skb) { return 0; }
SEC("classifier") int p_cls(struct __sk_buff* skb) { return 0; }
SEC("socket") int p_sock(struct __sk_buff* skb) { return 0; }
SEC("xdp_custom_name") int p_legacy(struct xdp_md* ctx) { return XDP_PASS; }
SEC("not_a_known_section") int p_unknown(void* ctx) { return 0; }

char _license[] SEC("license") = "GPL";
