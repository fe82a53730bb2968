/* l4lb: an L4 load balancer in the style of Katran/Maglev.
 * IPv4 TCP/UDP packets to a VIP (vip_map: address+port+protocol -> service) are hashed on
 * their 5-tuple into the service's Maglev lookup table (maglev_table, RING_SIZE slots per
 * service, Eisenbud et al., NSDI'16 sec. 3.4), which names a backend (backends). The packet
 * is encapsulated in IPIP (RFC 2003: new outer IPv4 header, protocol 4) towards the backend
 * and sent back out of the same port (XDP_TX). Anything else is XDP_PASS.
 * Statistics per CPU in lb_stats (struct datarec per enum lb_stat). */
#include "xdp_common.h"

#define MAX_VIPS 64
#define MAX_SERVICES 16
#define MAX_BACKENDS 256
#define RING_SIZE 251 /* Maglev M: prime, >> backends per service */

struct vip_key {
  __be32 addr;
  __be16 port;
  __u8 proto;
  __u8 pad;
};

struct vip_meta {
  __u32 service; /* row of maglev_table */
  __u32 flags;   /* reserved, 0 */
};

struct backend {
  __be32 addr; /* tunnel destination */
  __u8 mac[6]; /* next-hop MAC towards it */
  __u16 pad;
};

struct lb_config {
  __be32 src_addr; /* outer source address of the tunnel */
  __u8 src_mac[6]; /* our MAC */
  __u16 pad;
};

enum lb_stat { STAT_RX, STAT_VIP, STAT_TX, STAT_PASS, STAT_NO_BACKEND, STAT_ERROR, STAT_MAX };

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_VIPS);
  __type(key, struct vip_key);
  __type(value, struct vip_meta);
} vip_map SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_SERVICES* RING_SIZE);
  __type(key, __u32);
  __type(value, __u32); /* index into backends */
} maglev_table SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_BACKENDS);
  __type(key, __u32);
  __type(value, struct backend);
} backends SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct lb_config);
} lb_config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, STAT_MAX);
  __type(key, __u32);
  __type(value, struct datarec);
} lb_stats SEC(".maps");

static __always_inline __u32 rol32(__u32 w, unsigned s) {
  return (w << s) | (w >> (32 - s));
}

/* Bob Jenkins' lookup3 final mix over three words (the kernel's jhash_3words). */
static __always_inline __u32 hash_3words(__u32 a, __u32 b, __u32 c) {
  const __u32 initval = 0xdeadbeef + (3 << 2);
  a += initval;
  b += initval;
  c += initval;
  c ^= b;
  c -= rol32(b, 14);
  a ^= c;
  a -= rol32(c, 11);
  b ^= a;
  b -= rol32(a, 25);
  c ^= b;
  c -= rol32(b, 16);
  a ^= c;
  a -= rol32(c, 4);
  b ^= a;
  b -= rol32(a, 14);
  c ^= b;
  c -= rol32(b, 24);
  return c;
}

SEC("xdp")
int xdp_l4lb(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  struct iphdr* iph;
  struct vip_key vk = {};
  __u16 sport = 0;

  count(&lb_stats, STAT_RX, len);
  if ((void*)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP)) goto pass;
  iph = (void*)(eth + 1);
  if ((void*)(iph + 1) > data_end || iph->ihl < 5 || iph->version != 4) goto pass;
  if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)) goto pass; /* no L4 ports */

  void* l4 = (void*)iph + iph->ihl * 4;
  if (iph->protocol == IPPROTO_TCP) {
    struct tcphdr* th = l4;
    if ((void*)(th + 1) > data_end) goto pass;
    sport = th->source;
    vk.port = th->dest;
  } else if (iph->protocol == IPPROTO_UDP) {
    struct udphdr* uh = l4;
    if ((void*)(uh + 1) > data_end) goto pass;
    sport = uh->source;
    vk.port = uh->dest;
  } else {
    goto pass;
  }
  vk.addr = iph->daddr;
  vk.proto = iph->protocol;

  struct vip_meta* vip = bpf_map_lookup_elem(&vip_map, &vk);
  if (!vip) goto pass;
  count(&lb_stats, STAT_VIP, len);

  __u32 h = hash_3words(iph->saddr, iph->daddr, ((__u32)sport << 16 | vk.port) ^ vk.proto);
  __u32 slot = vip->service * RING_SIZE + h % RING_SIZE;
  __u32* bidx = bpf_map_lookup_elem(&maglev_table, &slot);
  if (!bidx) goto no_backend;
  struct backend* be = bpf_map_lookup_elem(&backends, bidx);
  __u32 zero = 0;
  struct lb_config* cfg = bpf_map_lookup_elem(&lb_config, &zero);
  if (!be || !cfg || !be->addr) goto no_backend;

  __u8 tos = iph->tos;
  __u16 inner_len = bpf_ntohs(iph->tot_len);
  if (bpf_xdp_adjust_head(ctx, -(int)sizeof(struct iphdr))) goto error;

  data = (void*)(long)ctx->data;
  data_end = (void*)(long)ctx->data_end;
  eth = data;
  struct iphdr* outer = data + sizeof(struct ethhdr);
  if ((void*)(outer + 1) + sizeof(struct iphdr) > data_end) goto error;

  __builtin_memcpy(eth->h_dest, be->mac, ETH_ALEN);
  __builtin_memcpy(eth->h_source, cfg->src_mac, ETH_ALEN);
  eth->h_proto = bpf_htons(ETH_P_IP);

  outer->version = 4;
  outer->ihl = 5;
  outer->tos = tos;
  outer->tot_len = bpf_htons(inner_len + sizeof(struct iphdr));
  outer->id = 0;
  outer->frag_off = 0;
  outer->ttl = 64;
  outer->protocol = IPPROTO_IPIP;
  outer->saddr = cfg->src_addr;
  outer->daddr = be->addr;
  outer->check = ipv4_csum(outer);

  count(&lb_stats, STAT_TX, len + sizeof(struct iphdr));
  return XDP_TX;

no_backend:
  count(&lb_stats, STAT_NO_BACKEND, len);
  return XDP_DROP;
error:
  count(&lb_stats, STAT_ERROR, len);
  return XDP_ABORTED;
pass:
  count(&lb_stats, STAT_PASS, len);
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
