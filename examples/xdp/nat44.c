/* nat44: source NAT for IPv4 TCP/UDP (RFC 3022 NAPT, port-preserving).
 * A packet from an inside host listed in snat_rules gets its source address rewritten to
 * the rule's outside address; the translation is recorded in the conntrack HASH as two
 * entries (original tuple -> outside, reply tuple -> inside) so replies are rewritten back.
 * IPv4 and TCP/UDP checksums are updated incrementally (RFC 1624; the L4 checksum covers
 * the address through the pseudo-header, RFC 793 3.1 / RFC 768; a zero UDP checksum stays
 * zero). Translated packets continue with XDP_PASS. */
#include "xdp_common.h"

struct ct_key {
  __be32 saddr;
  __be32 daddr;
  __be16 sport;
  __be16 dport;
  __u8 proto;
  __u8 pad[3];
};

enum ct_dir { CT_ORIGINAL = 0, CT_REPLY = 1 };

struct ct_entry {
  __be32 addr; /* new source (ORIGINAL) or new destination (REPLY) address */
  __be16 port; /* new source/destination port */
  __u8 dir;    /* enum ct_dir */
  __u8 pad;
  __u64 last_seen_ns;
  __u64 packets;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __be32);   /* inside address */
  __type(value, __be32); /* outside address */
} snat_rules SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct ct_key);
  __type(value, struct ct_entry);
} conntrack SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, struct datarec);
} nat_stats SEC(".maps"); /* 0 SNAT, 1 reverse (DNAT of replies), 2 new flows, 3 untouched */

/* Rewrites one address (and port) of the packet; `src` selects source or destination. */
static __always_inline void rewrite(struct iphdr* iph, __sum16* l4sum, __be16* portp, int src,
                                    __be32 addr, __be16 port, int is_udp) {
  __be32* ap = src ? &iph->saddr : &iph->daddr;
  int fix_l4 = !(is_udp && *l4sum == 0);
  csum_replace4(&iph->check, *ap, addr);
  if (fix_l4) {
    csum_replace4(l4sum, *ap, addr);
    csum_replace2(l4sum, *portp, port);
    if (is_udp && *l4sum == 0) *l4sum = 0xffff; /* RFC 768: computed zero is sent as ones */
  }
  *ap = addr;
  *portp = port;
}

SEC("xdp")
int xdp_nat44(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  struct iphdr* iph = (void*)(eth + 1);
  __sum16* l4sum;
  __be16 *sport, *dport;
  int is_udp;

  if ((void*)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl < 5)
    goto untouched;
  if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)) goto untouched;
  void* l4 = (void*)iph + iph->ihl * 4;
  if (iph->protocol == IPPROTO_TCP) {
    struct tcphdr* th = l4;
    if ((void*)(th + 1) > data_end) goto untouched;
    l4sum = &th->check, sport = &th->source, dport = &th->dest, is_udp = 0;
  } else if (iph->protocol == IPPROTO_UDP) {
    struct udphdr* uh = l4;
    if ((void*)(uh + 1) > data_end) goto untouched;
    l4sum = &uh->check, sport = &uh->source, dport = &uh->dest, is_udp = 1;
  } else {
    goto untouched;
  }

  struct ct_key key = {.saddr = iph->saddr,
                       .daddr = iph->daddr,
                       .sport = *sport,
                       .dport = *dport,
                       .proto = iph->protocol};
  __u64 now = bpf_ktime_get_ns();
  struct ct_entry* ct = bpf_map_lookup_elem(&conntrack, &key);
  if (!ct) {
    __be32* outside = bpf_map_lookup_elem(&snat_rules, &iph->saddr);
    if (!outside) goto untouched;
    struct ct_entry orig = {
        .addr = *outside, .port = *sport, .dir = CT_ORIGINAL, .last_seen_ns = now};
    struct ct_key rkey = {.saddr = iph->daddr,
                          .daddr = *outside,
                          .sport = *dport,
                          .dport = *sport,
                          .proto = iph->protocol};
    struct ct_entry reply = {
        .addr = iph->saddr, .port = *sport, .dir = CT_REPLY, .last_seen_ns = now};
    if (bpf_map_update_elem(&conntrack, &key, &orig, BPF_NOEXIST) ||
        bpf_map_update_elem(&conntrack, &rkey, &reply, BPF_NOEXIST))
      goto untouched; /* table full or a racing CPU won: leave it to the stack */
    count(&nat_stats, 2, len);
    ct = bpf_map_lookup_elem(&conntrack, &key);
    if (!ct) goto untouched;
  }
  ct->last_seen_ns = now;
  __sync_fetch_and_add(&ct->packets, 1);
  if (ct->dir == CT_ORIGINAL) {
    rewrite(iph, l4sum, sport, 1, ct->addr, ct->port, is_udp);
    count(&nat_stats, 0, len);
  } else {
    rewrite(iph, l4sum, dport, 0, ct->addr, ct->port, is_udp);
    count(&nat_stats, 1, len);
  }
  return XDP_PASS;

untouched:
  count(&nat_stats, 3, len);
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
