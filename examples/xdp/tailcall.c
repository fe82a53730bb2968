/* tailcall: a dispatcher that tail-calls (bpf_tail_call) a per-protocol program chosen by
 * the L4 protocol number through the PROG_ARRAY jmp_table. The dispatcher leaves the L4
 * header offset in the XDP metadata area (bpf_xdp_adjust_meta, struct meta) so the callee
 * does not parse again. Empty slots fall through to XDP_PASS.
 * Policy of the callees: xdp_tcp drops TCP to port 23 (telnet), xdp_udp drops UDP to port
 * 19 (chargen, an amplification vector), xdp_icmp drops ICMP/ICMPv6 packets over 1500 bytes;
 * all count per-CPU in disp_stats by protocol slot. */
#include "xdp_common.h"

struct meta {
  __u32 l4_off; /* bytes from data to the L4 header */
};

enum { SLOT_TCP, SLOT_UDP, SLOT_ICMP, SLOT_MISS, SLOT_DROP, SLOT_MAX };

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 256);
  __type(key, __u32); /* IP protocol number */
  __type(value, __u32);
} jmp_table SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, SLOT_MAX);
  __type(key, __u32);
  __type(value, struct datarec);
} disp_stats SEC(".maps");

/* Returns the L4 header (data + meta->l4_off, bounds-checked for `size` bytes) or NULL. */
static __always_inline void* l4_header(struct xdp_md* ctx, __u32 size) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct meta* m = (void*)(long)ctx->data_meta;
  if ((void*)(m + 1) > data) return NULL;
  __u32 off = m->l4_off;
  if (off > 512) return NULL;
  void* l4 = data + off;
  if (l4 + size > data_end) return NULL;
  return l4;
}

SEC("xdp")
int xdp_dispatch(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct ethhdr* eth = data;
  __u32 proto, l4_off;

  if ((void*)(eth + 1) > data_end) return XDP_PASS;
  if (eth->h_proto == bpf_htons(ETH_P_IP)) {
    struct iphdr* iph = (void*)(eth + 1);
    if ((void*)(iph + 1) > data_end || iph->ihl < 5) return XDP_PASS;
    if (iph->frag_off & bpf_htons(IP_OFFSET)) return XDP_PASS; /* no L4 header here */
    proto = iph->protocol;
    l4_off = sizeof(*eth) + iph->ihl * 4;
  } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr* ip6 = (void*)(eth + 1);
    if ((void*)(ip6 + 1) > data_end) return XDP_PASS;
    proto = ip6->nexthdr;
    l4_off = sizeof(*eth) + sizeof(*ip6);
  } else {
    return XDP_PASS;
  }

  if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct meta))) return XDP_PASS;
  struct meta* m = (void*)(long)ctx->data_meta;
  if ((void*)(m + 1) > (void*)(long)ctx->data) return XDP_PASS;
  m->l4_off = l4_off;

  bpf_tail_call(ctx, &jmp_table, proto);
  count(&disp_stats, SLOT_MISS, ctx->data_end - ctx->data);
  return XDP_PASS;
}

SEC("xdp")
int xdp_tcp(struct xdp_md* ctx) {
  __u64 len = ctx->data_end - ctx->data;
  struct tcphdr* th = l4_header(ctx, sizeof(*th));
  count(&disp_stats, SLOT_TCP, len);
  if (th && th->dest == bpf_htons(23)) {
    count(&disp_stats, SLOT_DROP, len);
    return XDP_DROP;
  }
  return XDP_PASS;
}

SEC("xdp")
int xdp_udp(struct xdp_md* ctx) {
  __u64 len = ctx->data_end - ctx->data;
  struct udphdr* uh = l4_header(ctx, sizeof(*uh));
  count(&disp_stats, SLOT_UDP, len);
  if (uh && uh->dest == bpf_htons(19)) {
    count(&disp_stats, SLOT_DROP, len);
    return XDP_DROP;
  }
  return XDP_PASS;
}

SEC("xdp")
int xdp_icmp(struct xdp_md* ctx) {
  __u64 len = ctx->data_end - ctx->data;
  count(&disp_stats, SLOT_ICMP, len);
  if (len > 1500 + sizeof(struct ethhdr)) {
    count(&disp_stats, SLOT_DROP, len);
    return XDP_DROP;
  }
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
