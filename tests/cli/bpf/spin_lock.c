// Fixture: map values holding a struct bpf_spin_lock. The kernel's answers (BPF_PROG_TEST_RUN,
// Linux 6.18) on any packet: retval 2 (XDP_PASS); res = {0, 0, 6, 0, -17, -2, 0, -17}; hl[0]
// and al[0] = {lock 0, cnt 9, x 2}. The caller's lock word (1) is never copied into a value
// (copy_map_value), so taking the lock after the update does not wait forever, and BPF_F_LOCK
// updates work on these maps.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct val {
  struct bpf_spin_lock l;
  __u32 cnt;
  __u64 x;
};
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, struct val);
} hl SEC(".maps");
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, struct val);
} al SEC(".maps");
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8);
  __type(key, __u32);
  __type(value, __s64);
} res SEC(".maps");

static void put(__u32 i, __s64 v) {
  __s64 *p = bpf_map_lookup_elem(&res, &i);
  if (p) *p = v;
}

SEC("xdp")
int xdp_spin_lock(struct xdp_md *ctx) {
  __u32 k0 = 0, k1 = 1;
  struct val s0 = {.cnt = 1, .x = 2};
  s0.l.val = 1;  // a held lock word in the caller's value
  put(0, bpf_map_update_elem(&hl, &k0, &s0, BPF_ANY));
  put(1, bpf_map_update_elem(&al, &k0, &s0, BPF_ANY));
  struct val *v = bpf_map_lookup_elem(&hl, &k0);
  if (v) {
    bpf_spin_lock(&v->l);
    v->cnt += 5;
    bpf_spin_unlock(&v->l);
    put(2, v->cnt);
  }
  s0.cnt = 9;
  put(3, bpf_map_update_elem(&hl, &k0, &s0, BPF_F_LOCK));
  put(4, bpf_map_update_elem(&hl, &k0, &s0, BPF_F_LOCK | BPF_NOEXIST));
  put(5, bpf_map_update_elem(&hl, &k1, &s0, BPF_F_LOCK | BPF_EXIST));
  put(6, bpf_map_update_elem(&al, &k0, &s0, BPF_F_LOCK));
  put(7, bpf_map_update_elem(&al, &k0, &s0, BPF_F_LOCK | BPF_NOEXIST));
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
