/* router: an IPv4/IPv6 forwarding fast path. The next hop comes from the kernel FIB
 * (bpf_fib_lookup, its neighbour table gives the MACs); on success the TTL / hop limit is
 * decremented (IPv4 checksum updated incrementally, RFC 1624 / RFC 1812 5.3.5), the MACs are
 * rewritten and the packet is redirected through the DEVMAP tx_ports, keyed by egress
 * ifindex (bpf_redirect_map; a missing port falls back to XDP_PASS). TTL <= 1, no
 * neighbour or no route go to the stack (XDP_PASS) so it sends the ICMP errors; blackhole,
 * unreachable and prohibit routes are XDP_DROP. Per-CPU counters in fwd_stats. */
#include "xdp_common.h"

enum { FWD_REDIRECT, FWD_PASS, FWD_DROP, FWD_MAX };

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __uint(max_entries, 256);
  __type(key, __u32);   /* egress ifindex */
  __type(value, __u32); /* ifindex to transmit on */
} tx_ports SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, FWD_MAX);
  __type(key, __u32);
  __type(value, struct datarec);
} fwd_stats SEC(".maps");

/* Decrements the TTL, updating the checksum over the (ttl, protocol) word. */
static __always_inline void ip_decrease_ttl(struct iphdr* iph) {
  __be16 old = *(__be16*)&iph->ttl;
  iph->ttl--;
  csum_replace2(&iph->check, old, *(__be16*)&iph->ttl);
}

SEC("xdp")
int xdp_router(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  struct bpf_fib_lookup fib = {};
  struct iphdr* iph = NULL;
  struct ipv6hdr* ip6 = NULL;

  if ((void*)(eth + 1) > data_end) goto pass;
  if (eth->h_proto == bpf_htons(ETH_P_IP)) {
    iph = (void*)(eth + 1);
    if ((void*)(iph + 1) > data_end || iph->ttl <= 1) goto pass;
    fib.family = AF_INET;
    fib.tos = iph->tos;
    fib.l4_protocol = iph->protocol;
    fib.tot_len = bpf_ntohs(iph->tot_len);
    fib.ipv4_src = iph->saddr;
    fib.ipv4_dst = iph->daddr;
  } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
    ip6 = (void*)(eth + 1);
    if ((void*)(ip6 + 1) > data_end || ip6->hop_limit <= 1) goto pass;
    fib.family = AF_INET6;
    fib.flowinfo = *(__be32*)ip6 & bpf_htonl(0x0FFFFFFF);
    fib.l4_protocol = ip6->nexthdr;
    fib.tot_len = bpf_ntohs(ip6->payload_len);
    __builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
    __builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
  } else {
    goto pass;
  }
  fib.ifindex = ctx->ingress_ifindex;

  long rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
  if (rc == BPF_FIB_LKUP_RET_BLACKHOLE || rc == BPF_FIB_LKUP_RET_UNREACHABLE ||
      rc == BPF_FIB_LKUP_RET_PROHIBIT) {
    count(&fwd_stats, FWD_DROP, len);
    return XDP_DROP;
  }
  if (rc != BPF_FIB_LKUP_RET_SUCCESS) goto pass;

  if (iph)
    ip_decrease_ttl(iph);
  else if (ip6)
    ip6->hop_limit--;
  __builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
  __builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
  count(&fwd_stats, FWD_REDIRECT, len);
  return bpf_redirect_map(&tx_ports, fib.ifindex, XDP_PASS);

pass:
  count(&fwd_stats, FWD_PASS, len);
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
