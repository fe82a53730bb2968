// Fixture: XDP programs for DEVMAP and CPUMAP entries (libbpf sets expected_attach_type
// BPF_XDP_DEVMAP / BPF_XDP_CPUMAP from the section), which BPF_PROG_TEST_RUN refuses (-EINVAL).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp/devmap") int xdp_devmap_entry(struct xdp_md *ctx) { return XDP_PASS; }
SEC("xdp/cpumap") int xdp_cpumap_entry(struct xdp_md *ctx) { return XDP_PASS; }

char _license[] SEC("license") = "GPL";
