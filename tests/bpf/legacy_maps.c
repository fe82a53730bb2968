// Old-style SEC("maps") definitions, as programs written before BTF maps declared them.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct bpf_map_def {
  unsigned int type;
  unsigned int key_size;
  unsigned int value_size;
  unsigned int max_entries;
  unsigned int map_flags;
};

struct bpf_map_def SEC("maps") tx_port = {
    .type = BPF_MAP_TYPE_DEVMAP,
    .key_size = sizeof(int),
    .value_size = sizeof(int),
    .max_entries = 64,
};

struct bpf_map_def SEC("maps") rxcnt = {
    .type = BPF_MAP_TYPE_PERCPU_ARRAY,
    .key_size = sizeof(__u32),
    .value_size = sizeof(long),
    .max_entries = 256,
};

struct bpf_map_def SEC("maps") flows = {
    .type = BPF_MAP_TYPE_LRU_HASH,
    .key_size = 8,
    .value_size = 16,
    .max_entries = 1000,
    .map_flags = 0,
};

SEC("xdp_redirect_map")
int xdp_redirect_map_prog(struct xdp_md* ctx) {
  __u32 key = 0;
  long* value = bpf_map_lookup_elem(&rxcnt, &key);
  if (value) *value += 1;
  __u64 fk = ctx->ingress_ifindex;
  void* f = bpf_map_lookup_elem(&flows, &fk);
  if (f) return XDP_DROP;
  return bpf_redirect_map(&tx_port, 0, 0);
}

char _license[] SEC("license") = "GPL";
