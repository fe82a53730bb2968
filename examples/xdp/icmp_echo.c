/* icmp_echo: answers ICMP Echo (RFC 792) and ICMPv6 Echo (RFC 4443 4.1) requests addressed
 * to one of our addresses (local_v4 / local_v6) straight from XDP: MAC and IP addresses are
 * swapped, the type becomes Echo Reply, TTL/hop limit is reset to 64 and the checksums are
 * updated incrementally (bpf_csum_diff over the changed type word; the pseudo-header sum is
 * unchanged by the address swap). The reply leaves with XDP_TX; anything else is XDP_PASS. */
#include "xdp_common.h"

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __be32);
  __type(value, __u32); /* 1 = answer */
} local_v4 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, struct in6_addr);
  __type(value, __u32);
} local_v6 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, struct datarec);
} echo_stats SEC(".maps"); /* 0 IPv4 replies, 1 IPv6 replies */

static __always_inline void swap_mac(struct ethhdr* eth) {
  __u8 tmp[ETH_ALEN];
  __builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
  __builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
  __builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/* Rewrites the ICMP type byte at *type_word (type, code pair) and updates *sum with
 * bpf_csum_diff over the 16-bit word, zero-padded to 4 bytes. */
static __always_inline void set_type(__u8* type_word, __u8 new_type, __sum16* sum) {
  __be32 from = 0, to = 0;
  __builtin_memcpy(&from, type_word, 2);
  type_word[0] = new_type;
  __builtin_memcpy(&to, type_word, 2);
  __s64 c = bpf_csum_diff(&from, sizeof(from), &to, sizeof(to), (__u16) ~*sum);
  if (c >= 0) *sum = csum_fold((__u32)c);
}

SEC("xdp")
int xdp_icmp_echo(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct ethhdr* eth = data;
  if ((void*)(eth + 1) > data_end) return XDP_PASS;

  if (eth->h_proto == bpf_htons(ETH_P_IP)) {
    struct iphdr* iph = (void*)(eth + 1);
    if ((void*)(iph + 1) > data_end || iph->ihl < 5) return XDP_PASS;
    if (iph->protocol != IPPROTO_ICMP || (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)))
      return XDP_PASS; /* fragmented requests go to the stack, which reassembles */
    struct icmphdr* icmp = (void*)iph + iph->ihl * 4;
    if ((void*)(icmp + 1) > data_end || icmp->type != ICMP_ECHO || icmp->code) return XDP_PASS;
    if (!bpf_map_lookup_elem(&local_v4, &iph->daddr)) return XDP_PASS;

    swap_mac(eth);
    __be32 a = iph->saddr;
    iph->saddr = iph->daddr;
    iph->daddr = a;
    __be16 old_ttl = *(__be16*)&iph->ttl; /* ttl, protocol */
    iph->ttl = 64;
    csum_replace2(&iph->check, old_ttl, *(__be16*)&iph->ttl);
    set_type(&icmp->type, ICMP_ECHOREPLY, &icmp->checksum);
    count(&echo_stats, 0, data_end - data);
    return XDP_TX;
  }

  if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr* ip6 = (void*)(eth + 1);
    if ((void*)(ip6 + 1) > data_end || ip6->nexthdr != IPPROTO_ICMPV6) return XDP_PASS;
    struct icmp6hdr* icmp6 = (void*)(ip6 + 1);
    if ((void*)(icmp6 + 1) > data_end || icmp6->icmp6_type != ICMPV6_ECHO_REQUEST ||
        icmp6->icmp6_code)
      return XDP_PASS;
    if (!bpf_map_lookup_elem(&local_v6, &ip6->daddr)) return XDP_PASS;

    swap_mac(eth);
    struct in6_addr a = ip6->saddr;
    ip6->saddr = ip6->daddr;
    ip6->daddr = a;
    ip6->hop_limit = 64;
    set_type(&icmp6->icmp6_type, ICMPV6_ECHO_REPLY, &icmp6->icmp6_cksum);
    count(&echo_stats, 1, data_end - data);
    return XDP_TX;
  }
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
