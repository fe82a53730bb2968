// XDP program for the `knod test-run` CLI test: map update, adjust_head/meta, csum_diff,
// bpf_printk. BPF_PROG_TEST_RUN on a 64-byte packet 00..3f gives retval 3 (XDP_TX) and 76
// bytes of data_out (8 metadata + 4 new head + 64), first packet bytes 02 04 (csum 0x402).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u64); } cnt SEC(".maps");
SEC("xdp")
int prog(struct xdp_md *ctx) {
  __u32 k = 1;
  __u64 *v = bpf_map_lookup_elem(&cnt, &k);
  if (v) *v += 1;
  if (bpf_xdp_adjust_head(ctx, -4)) return XDP_ABORTED;
  if (bpf_xdp_adjust_meta(ctx, -8)) return XDP_DROP;
  void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
  if (data + 8 > end) return XDP_DROP;
  __u32 c = bpf_csum_diff(0, 0, data, 8, 0);
  ((__u8 *)data)[0] = c & 0xff;
  ((__u8 *)data)[1] = c >> 8;
  bpf_printk("len %d csum %x", (int)(end - data), c);
  return XDP_TX;
}
char _license[] SEC("license") = "GPL";
