/* proto_count: per-CPU traffic accounting, always XDP_PASS.
 * ethertype_stats counts frames by ethertype class (enum eth_class, after one 802.1Q tag);
 * proto_stats counts IPv4/IPv6 packets by upper-layer protocol number (IANA "Protocol
 * Numbers"), following up to MAX_EXT IPv6 extension headers (RFC 8200 4). */
#include "xdp_common.h"

#define MAX_EXT 4

enum eth_class { ETH_OTHER, ETH_IPV4, ETH_IPV6, ETH_ARP, ETH_VLAN, ETH_CLASS_MAX };

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 256);
  __type(key, __u32); /* IP protocol / IPv6 next header */
  __type(value, struct datarec);
} proto_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, ETH_CLASS_MAX);
  __type(key, __u32); /* enum eth_class */
  __type(value, struct datarec);
} ethertype_stats SEC(".maps");

/* Skips IPv6 extension headers; returns the upper-layer protocol number. */
static __always_inline __u8 ipv6_upper_proto(struct ipv6hdr* ip6, void* data_end) {
  __u8 nh = ip6->nexthdr;
  void* p = ip6 + 1;
#pragma unroll
  for (int i = 0; i < MAX_EXT; i++) {
    struct ipv6_opt_hdr* h = p; /* hdrlen: 8-octet units after the first 8 */
    if ((void*)(h + 1) > data_end) break;
    if (nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS) {
      nh = h->nexthdr;
      p += (h->hdrlen + 1) * 8;
    } else if (nh == IPPROTO_FRAGMENT) {
      nh = h->nexthdr;
      p += 8;
    } else {
      break;
    }
  }
  return nh;
}

SEC("xdp")
int xdp_proto_count(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  void* l3 = eth + 1;

  if (l3 > data_end) return XDP_PASS;
  __u16 proto = eth->h_proto;
  if (proto_is_vlan(proto)) {
    struct vlan_hdr* vh = l3;
    if ((void*)(vh + 1) > data_end) return XDP_PASS;
    count(&ethertype_stats, ETH_VLAN, len);
    proto = vh->h_vlan_encapsulated_proto;
    l3 = vh + 1;
  }

  if (proto == bpf_htons(ETH_P_IP)) {
    count(&ethertype_stats, ETH_IPV4, len);
    struct iphdr* iph = l3;
    if ((void*)(iph + 1) <= data_end) count(&proto_stats, iph->protocol, len);
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    count(&ethertype_stats, ETH_IPV6, len);
    struct ipv6hdr* ip6 = l3;
    if ((void*)(ip6 + 1) <= data_end) count(&proto_stats, ipv6_upper_proto(ip6, data_end), len);
  } else if (proto == bpf_htons(ETH_P_ARP)) {
    count(&ethertype_stats, ETH_ARP, len);
  } else {
    count(&ethertype_stats, ETH_OTHER, len);
  }
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
