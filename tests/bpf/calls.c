// bpf-to-bpf calls: a static subprogram shared by two programs, a nested call chain, a global
// (non-static) function in .text, and a bpf_loop callback (ld_imm64 BPF_PSEUDO_FUNC).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static __noinline __u32 shared_mix(__u32 x) { return x * 2654435761u + 17; }

static __noinline __u32 leaf(__u32 x) { return x ^ 0x5a5a; }

static __noinline __u32 middle(__u32 x) { return leaf(x) + shared_mix(x); }

__noinline int global_helper(int x) { return x + 1; }

static long loop_cb(__u64 i, void* ctx) {
  __u32* acc = ctx;
  *acc += (__u32)i;
  return 0;
}

SEC("xdp")
int xdp_one(struct xdp_md* ctx) {
  __u32 v = shared_mix(ctx->rx_queue_index);
  return (middle(v) & 1) ? XDP_PASS : XDP_DROP;
}

SEC("tc")
int tc_two(struct __sk_buff* skb) {
  __u32 acc = shared_mix(skb->len);
  bpf_loop(4, loop_cb, &acc, 0);
  return global_helper(acc) & 1;
}

char _license[] SEC("license") = "GPL";
