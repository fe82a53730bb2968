// A static function in a program section: libbpf refuses the object ("sec 'xdp': program
// 'p_static' is static and not supported", -ENOTSUP).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp") __attribute__((used)) static int p_static(struct xdp_md* ctx) { return XDP_DROP; }

char _license[] SEC("license") = "GPL";
