// Fixture for per-CPU lanes on a GPU (runtime.c run_lanes): after its 14-byte Ethernet header
// each packet gets [0..3] the shared counter "seq" before this packet (an ARRAY value, plain
// add, so it numbers the packets in the order they ran) and [4..7] bpf_get_smp_processor_id();
// the packet counts itself in the PERCPU_ARRAY "hits" (plain add), which makes the program one
// with per-CPU maps.
// clang-format off: linux/bpf.h defines the types bpf_helpers.h uses
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
// clang-format on

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, __u32);
  __type(value, __u64);
  __uint(max_entries, 1);
} seq SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, __u64);
  __uint(max_entries, 1);
} hits SEC(".maps");

SEC("xdp")
int xdp_gpu_percpu(struct xdp_md* ctx) {
  __u8* data = (void*)(long)ctx->data;
  __u8* end = (void*)(long)ctx->data_end;
  __u8* p = data + 14;
  if (p + 8 > end) return XDP_PASS;
  __u32 k = 0;
  __u64* s = bpf_map_lookup_elem(&seq, &k);
  __u64* h = bpf_map_lookup_elem(&hits, &k);
  if (!s || !h) return XDP_ABORTED;
  __u32 n = (__u32)*s;
  *s += 1;
  *h += 1;
  __u32 cpu = bpf_get_smp_processor_id();
  __builtin_memcpy(p, &n, 4);
  __builtin_memcpy(p + 4, &cpu, 4);
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
