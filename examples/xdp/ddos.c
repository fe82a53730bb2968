/* ddos: a DDoS filter for IPv4 (optionally behind one 802.1Q tag).
 *  1. blocklist (LPM_TRIE, longest-prefix match on the source) -> XDP_DROP;
 *  2. per-source token bucket (LRU_HASH rate_limit; rate and burst from ddos_config,
 *     refilled from bpf_ktime_get_ns) -> XDP_DROP when empty;
 *  3. SYN-flood guard: TCP SYNs (no ACK) per source per second (LRU_HASH syn_track) over
 *     ddos_config.syn_per_sec -> XDP_DROP.
 * Everything else is XDP_PASS. Verdict counters per CPU in ddos_stats. */
#include "xdp_common.h"

#define NSEC_PER_SEC 1000000000ULL

struct lpm_v4_key {
  __u32 prefixlen; /* bits */
  __u8 addr[4];    /* network byte order */
};

struct ddos_config {
  __u64 rate_pps;    /* tokens per second per source; 0 = no rate limit */
  __u64 burst;       /* bucket depth, packets */
  __u32 syn_per_sec; /* SYNs per source per second; 0 = no SYN guard */
  __u32 pad;
};

struct bucket {
  __u64 credit_ns; /* accumulated credit, in ns of refill time */
  __u64 last_ns;   /* bpf_ktime_get_ns() at the last refill */
};

struct syn_window {
  __u64 start_ns;
  __u64 syns;
};

enum ddos_stat { DDOS_PASS, DDOS_DROP_BLOCKLIST, DDOS_DROP_RATE, DDOS_DROP_SYN, DDOS_MAX };

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, 4096);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lpm_v4_key);
  __type(value, __u32); /* rule id */
} blocklist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ddos_config);
} ddos_config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __be32);
  __type(value, struct bucket);
} rate_limit SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __be32);
  __type(value, struct syn_window);
} syn_track SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, DDOS_MAX);
  __type(key, __u32);
  __type(value, struct datarec);
} ddos_stats SEC(".maps");

/* Token bucket in time units: a packet costs 1e9/rate ns of credit; credit is capped at
 * burst packets' worth. Returns 1 when the packet may pass. */
static __always_inline int bucket_take(__be32 src, const struct ddos_config* cfg, __u64 now) {
  if (!cfg->rate_pps) return 1;
  __u64 cost = NSEC_PER_SEC / cfg->rate_pps;
  __u64 cap = cost * cfg->burst;
  struct bucket* b = bpf_map_lookup_elem(&rate_limit, &src);
  if (!b) {
    struct bucket fresh = {.credit_ns = cap >= cost ? cap - cost : 0, .last_ns = now};
    bpf_map_update_elem(&rate_limit, &src, &fresh, BPF_ANY);
    return cap >= cost;
  }
  __u64 credit = b->credit_ns + (now - b->last_ns);
  if (credit > cap) credit = cap;
  b->last_ns = now;
  if (credit < cost) {
    b->credit_ns = credit;
    return 0;
  }
  b->credit_ns = credit - cost;
  return 1;
}

/* Counts a SYN in the source's one-second window. Returns 1 when under the threshold. */
static __always_inline int syn_allow(__be32 src, const struct ddos_config* cfg, __u64 now) {
  if (!cfg->syn_per_sec) return 1;
  struct syn_window* w = bpf_map_lookup_elem(&syn_track, &src);
  if (!w || now - w->start_ns >= NSEC_PER_SEC) {
    struct syn_window fresh = {.start_ns = now, .syns = 1};
    bpf_map_update_elem(&syn_track, &src, &fresh, BPF_ANY);
    return 1;
  }
  __sync_fetch_and_add(&w->syns, 1);
  return w->syns <= cfg->syn_per_sec;
}

SEC("xdp")
int xdp_ddos(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  void* l3 = eth + 1;
  __u16 proto;
  __u32 reason = DDOS_PASS;

  if (l3 > data_end) goto out;
  proto = eth->h_proto;
  if (proto_is_vlan(proto)) {
    struct vlan_hdr* vh = l3;
    if ((void*)(vh + 1) > data_end) goto out;
    proto = vh->h_vlan_encapsulated_proto;
    l3 = vh + 1;
  }
  if (proto != bpf_htons(ETH_P_IP)) goto out;
  struct iphdr* iph = l3;
  if ((void*)(iph + 1) > data_end || iph->ihl < 5) goto out;

  struct lpm_v4_key key = {.prefixlen = 32};
  __builtin_memcpy(key.addr, &iph->saddr, 4);
  if (bpf_map_lookup_elem(&blocklist, &key)) {
    reason = DDOS_DROP_BLOCKLIST;
    goto out;
  }

  __u32 zero = 0;
  struct ddos_config* cfg = bpf_map_lookup_elem(&ddos_config, &zero);
  if (!cfg) goto out;
  __u64 now = bpf_ktime_get_ns();

  if (iph->protocol == IPPROTO_TCP && !(iph->frag_off & bpf_htons(IP_OFFSET))) {
    struct tcphdr* th = (void*)iph + iph->ihl * 4;
    if ((void*)(th + 1) > data_end) goto out;
    if (th->syn && !th->ack && !syn_allow(iph->saddr, cfg, now)) {
      reason = DDOS_DROP_SYN;
      goto out;
    }
  }
  if (!bucket_take(iph->saddr, cfg, now)) reason = DDOS_DROP_RATE;

out:
  count(&ddos_stats, reason, len);
  return reason == DDOS_PASS ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
