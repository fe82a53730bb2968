// Fixture: a valid BPF object with a map and no program.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 1);
} only_map SEC(".maps");

char _license[] SEC("license") = "GPL";
