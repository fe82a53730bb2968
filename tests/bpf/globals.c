// Global data: .data, .rodata, .bss with two variables each at different offsets.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile __u32 data_a = 7;          // .data
volatile __u64 data_b = 0x1122334455667788ULL;
const volatile __u32 ro_a = 3;      // .rodata
const volatile __u32 ro_b[4] = {10, 20, 30, 40};
volatile __u64 bss_a;               // .bss
volatile __u32 bss_b[3];

SEC("xdp")
int xdp_globals(struct xdp_md* ctx) {
  bss_a += data_b;
  bss_b[2] = ro_b[ro_a] + data_a;
  data_a++;
  return ro_a == 3 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
