// Fixture for the host-simulated GPU's LPM_TRIE, LRU_HASH and DEVMAP_HASH support: each
// packet carries one operation after its 14-byte Ethernet header,
//   [0] op  [1] prefixlen  [2..5] key  [6] value  [7] flags  [8..11] result (written here)
// op 1: lpm update, 2: lpm delete, 3: lpm lookup (prefixlen 32; result = value or -1),
// op 4: lru update (result = return, then [6] = lookup value or 0xff), 5: lru delete,
// op 6: bpf_redirect_map(devs, key, flags) (the verdict). Others: XDP_PASS.
// clang-format off: linux/bpf.h defines the types bpf_helpers.h uses
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
// clang-format on

struct lpm_key {
  __u32 prefixlen;
  __u8 data[4];
};

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __type(key, struct lpm_key);
  __type(value, __u32);
  __uint(max_entries, 4);
  __uint(map_flags, BPF_F_NO_PREALLOC);
} lpm SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 64);
} lru SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 8);
} devs SEC(".maps");

SEC("xdp")
int xdp_gpu_maps(struct xdp_md* ctx) {
  __u8* data = (void*)(long)ctx->data;
  __u8* end = (void*)(long)ctx->data_end;
  __u8* p = data + 14;
  if (p + 12 > end) return XDP_PASS;
  struct lpm_key k = {.prefixlen = p[1]};
  __builtin_memcpy(k.data, p + 2, 4);
  __u32 key;
  __builtin_memcpy(&key, p + 2, 4);
  __u32 value = p[6];
  __s32 r = 0;
  switch (p[0]) {
    case 1:
      r = bpf_map_update_elem(&lpm, &k, &value, p[7]);
      break;
    case 2:
      r = bpf_map_delete_elem(&lpm, &k);
      break;
    case 3: {
      k.prefixlen = 32;
      __u32* v = bpf_map_lookup_elem(&lpm, &k);
      r = v ? (__s32)*v : -1;
      break;
    }
    case 4: {
      r = bpf_map_update_elem(&lru, &key, &value, p[7]);
      __u32* v = bpf_map_lookup_elem(&lru, &key);
      p[6] = v ? (__u8)*v : 0xff;
      break;
    }
    case 5:
      r = bpf_map_delete_elem(&lru, &key);
      break;
    case 6:
      return bpf_redirect_map(&devs, key, p[7]);
    default:
      return XDP_PASS;
  }
  __builtin_memcpy(p + 8, &r, 4);
  return XDP_TX;
}

char _license[] SEC("license") = "GPL";
