/* Shared parsing and checksum helpers for the knod example XDP programs.
 * Header layouts: linux/if_ether.h, linux/ip.h (RFC 791), linux/ipv6.h (RFC 8200),
 * 802.1Q tag (IEEE 802.1Q-2018 9.3). Checksums: RFC 1071 sum, RFC 1624 incremental update. */
#pragma once

#include <linux/bpf.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
/* libbpf's headers need the kernel types above: keep them in their own block. */
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF
#define AF_INET 2
#define AF_INET6 10

/* ICMP echo header (RFC 792); linux/icmp.h pulls in libc headers, so it is spelled here. */
struct icmphdr {
  __u8 type;
  __u8 code;
  __sum16 checksum;
  __be16 id;
  __be16 sequence;
};
#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8

/* 802.1Q tag as it follows the MAC addresses: TCI then the encapsulated ethertype. */
struct vlan_hdr {
  __be16 h_vlan_TCI;
  __be16 h_vlan_encapsulated_proto;
};

/* Packets/bytes pair used by the per-CPU statistics maps. */
struct datarec {
  __u64 packets;
  __u64 bytes;
};

static __always_inline int proto_is_vlan(__u16 h_proto) {
  return h_proto == bpf_htons(ETH_P_8021Q) || h_proto == bpf_htons(ETH_P_8021AD);
}

/* Folds a 32-bit one's-complement sum to 16 bits and complements it (RFC 1071). */
static __always_inline __u16 csum_fold(__u32 csum) {
  csum = (csum & 0xffff) + (csum >> 16);
  csum = (csum & 0xffff) + (csum >> 16);
  return (__u16)~csum;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for one 16-bit field m -> m'. */
static __always_inline void csum_replace2(__sum16* sum, __be16 from, __be16 to) {
  __u32 c = (__u16) ~*sum;
  c += (__u16)~from;
  c += (__u16)to;
  *sum = csum_fold(c);
}

/* RFC 1624 update for a 32-bit field (an IPv4 address), as two 16-bit words. */
static __always_inline void csum_replace4(__sum16* sum, __be32 from, __be32 to) {
  __u32 c = (__u16) ~*sum;
  c += (__u16) ~(from & 0xffff) + (__u16) ~(from >> 16);
  c += (to & 0xffff) + (to >> 16);
  *sum = csum_fold(c);
}

/* Full RFC 1071 checksum of a 20-byte IPv4 header (no options). */
static __always_inline __u16 ipv4_csum(struct iphdr* iph) {
  __u16* w = (__u16*)iph;
  __u32 c = 0;
  iph->check = 0;
#pragma unroll
  for (int i = 0; i < (int)sizeof(*iph) / 2; i++) c += w[i];
  return csum_fold(c);
}

/* Adds one packet of `bytes` to slot `key` of a PERCPU_ARRAY of struct datarec. */
static __always_inline void count(void* map, __u32 key, __u64 bytes) {
  struct datarec* rec = bpf_map_lookup_elem(map, &key);
  if (rec) {
    rec->packets++;
    rec->bytes += bytes;
  }
}
