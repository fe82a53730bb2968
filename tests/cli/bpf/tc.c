// Fixture for `knod run`: a tc program (SEC("tc"), BPF_PROG_TYPE_SCHED_CLS), which knod must
// refuse to run as XDP (its ctx is a __sk_buff, not an xdp_md).
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

SEC("tc")
int tc_len(struct __sk_buff* skb) {
  return skb->len > 100 ? 2 : 0;
}

char _license[] SEC("license") = "GPL";
