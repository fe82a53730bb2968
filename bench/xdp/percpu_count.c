/* percpu_count: per-CPU packet and byte counters in a PERCPU_HASH keyed by EtherType, the
 * shape of many production stats programs. Every packet of a capture of one protocol updates
 * the same key on every CPU, so the map's per-CPU layout decides whether CPUs share cache
 * lines (docs/PERFORMANCE.md, "Per-CPU hash values"). All packets pass. */
#include "xdp_common.h"

struct rec {
  __u64 packets;
  __u64 bytes;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, 256);
  __type(key, __u32); /* h_proto, network byte order */
  __type(value, struct rec);
} by_proto SEC(".maps");

SEC("xdp")
int xdp_percpu_count(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* data_end = (void*)(long)ctx->data_end;
  struct ethhdr* eth = data;
  if ((void*)(eth + 1) > data_end) return XDP_PASS;
  __u32 key = eth->h_proto;
  struct rec* r = bpf_map_lookup_elem(&by_proto, &key);
  if (!r) {
    struct rec fresh = {1, data_end - data};
    bpf_map_update_elem(&by_proto, &key, &fresh, BPF_NOEXIST);
    return XDP_PASS;
  }
  r->packets++;
  r->bytes += data_end - data;
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
