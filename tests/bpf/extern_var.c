// An extern variable (__kconfig): knod has no kernel config to resolve it from.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern unsigned int LINUX_KERNEL_VERSION __kconfig;

SEC("xdp")
int xdp_kver(struct xdp_md* ctx) { return LINUX_KERNEL_VERSION > 0 ? XDP_PASS : XDP_DROP; }

char _license[] SEC("license") = "GPL";
