/* vlan: an 802.1Q VLAN switch port. The packet's VLAN (0 for untagged) selects an entry of
 * vlan_egress: the egress port (a slot of the DEVMAP tx_ports), the VLAN it leaves on (0 =
 * untagged: the tag is popped; otherwise pushed or rewritten) and the MAC addresses to
 * write. The packet is sent with bpf_redirect_map(tx_ports); unknown VLANs are XDP_PASS. */
#include "xdp_common.h"

#define VLAN_VID_MASK 0x0fff

struct vlan_egress {
  __u32 tx_port; /* key into tx_ports */
  __u16 vid;     /* egress VLAN id, 0 = untagged */
  __u8 dst_mac[6];
  __u8 src_mac[6];
  __u16 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u16); /* ingress VLAN id, host order; 0 = untagged */
  __type(value, struct vlan_egress);
} vlan_egress SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32); /* ifindex */
} tx_ports SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, struct datarec);
} vlan_stats SEC(".maps"); /* 0 popped, 1 pushed, 2 rewritten/kept, 3 passed */

/* Removes the outer 802.1Q tag; the MAC addresses move 4 bytes towards the payload. */
static __always_inline int vlan_pop(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct ethhdr eth_cpy;
  struct ethhdr* eth = data;
  struct vlan_hdr* vh = (void*)(eth + 1);
  if ((void*)(vh + 1) > data_end) return -1;
  __builtin_memcpy(&eth_cpy, eth, sizeof(eth_cpy));
  eth_cpy.h_proto = vh->h_vlan_encapsulated_proto;
  if (bpf_xdp_adjust_head(ctx, (int)sizeof(*vh))) return -1;
  eth = (void*)(long)ctx->data;
  if ((void*)(eth + 1) > (void*)(long)ctx->data_end) return -1;
  __builtin_memcpy(eth, &eth_cpy, sizeof(*eth));
  return 0;
}

/* Inserts an 802.1Q tag (TPID 0x8100, PCP 0) carrying `vid` after the MAC addresses. */
static __always_inline int vlan_push(struct xdp_md* ctx, __u16 vid) {
  if (bpf_xdp_adjust_head(ctx, -(int)sizeof(struct vlan_hdr))) return -1;
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct ethhdr* eth = data;
  struct vlan_hdr* vh = (void*)(eth + 1);
  if ((void*)(vh + 1) > data_end) return -1;
  /* The old header now starts 4 bytes in: move the MACs, keep the old ethertype in place. */
  __builtin_memmove(eth, data + sizeof(*vh), 2 * ETH_ALEN);
  vh->h_vlan_encapsulated_proto = *(__be16*)(data + sizeof(*vh) + 2 * ETH_ALEN);
  eth->h_proto = bpf_htons(ETH_P_8021Q);
  vh->h_vlan_TCI = bpf_htons(vid & VLAN_VID_MASK);
  return 0;
}

SEC("xdp")
int xdp_vlan(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  __u64 len = data_end - data;
  struct ethhdr* eth = data;
  __u16 vid = 0;
  int tagged = 0;

  if ((void*)(eth + 1) > data_end) return XDP_DROP;
  if (proto_is_vlan(eth->h_proto)) {
    struct vlan_hdr* vh = (void*)(eth + 1);
    if ((void*)(vh + 1) > data_end) return XDP_DROP;
    vid = bpf_ntohs(vh->h_vlan_TCI) & VLAN_VID_MASK;
    tagged = 1;
  }
  struct vlan_egress* out = bpf_map_lookup_elem(&vlan_egress, &vid);
  if (!out) {
    count(&vlan_stats, 3, len);
    return XDP_PASS;
  }
  __u16 new_vid = out->vid;

  if (tagged && !new_vid) {
    if (vlan_pop(ctx)) return XDP_ABORTED;
    count(&vlan_stats, 0, len);
  } else if (!tagged && new_vid) {
    if (vlan_push(ctx, new_vid)) return XDP_ABORTED;
    count(&vlan_stats, 1, len);
  } else {
    if (tagged) {
      struct vlan_hdr* vh = (void*)(eth + 1);
      vh->h_vlan_TCI = (vh->h_vlan_TCI & bpf_htons(~VLAN_VID_MASK)) | bpf_htons(new_vid);
    }
    count(&vlan_stats, 2, len);
  }

  data = (void*)(long)ctx->data;
  data_end = (void*)(long)ctx->data_end;
  eth = data;
  if ((void*)(eth + 1) > data_end) return XDP_ABORTED;
  __builtin_memcpy(eth->h_dest, out->dst_mac, ETH_ALEN);
  __builtin_memcpy(eth->h_source, out->src_mac, ETH_ALEN);
  return bpf_redirect_map(&tx_ports, out->tx_port, 0);
}

char _license[] SEC("license") = "GPL";
