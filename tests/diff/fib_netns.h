// The routes bpf_fib_lookup sees on both sides. The kernel consults the FIB of the caller's
// network namespace, so the test moves itself into a fresh one (unshare(CLONE_NEWNET), root)
// holding a known table, and gives knod the same table as xdp::load_fib_table JSON.
// Namespace (lo = ifindex 1 is the test_run ingress device; forwarding on everywhere):
//   veth kd0 (02:00:00:00:00:fe, MTU 1500) <-> kd1, both up
//   10.0.0.0/24 dev kd0           neighbour 10.0.0.2 -> 02:00:00:00:00:02 (10.0.0.1: none)
//   172.16.0.0/16 via 10.0.0.254  neighbour 10.0.0.254 -> 02:00:00:00:00:fd
//   blackhole 192.0.2.0/24, unreachable 198.51.100.0/24, prohibit 203.0.113.0/24
//   fd00::/64 dev kd0             neighbour fd00::2 -> 02:00:00:00:00:02
//   fe80::/64 dev kd0 (the kernel adds it), blackhole fd00:dead::/32
#pragma once

#include <string>

namespace knod::diff {

/// Enters the namespace (once per process; later calls return the first outcome). False
/// with `why` when it cannot be made (no CAP_SYS_ADMIN, no veth, no `ip`).
bool enter_fib_netns(std::string* why);

/// The knod FIB table (src/xdp/fib.h JSON) mirroring the namespace; valid after a
/// successful enter_fib_netns (it holds the veth ifindexes).
std::string fib_json();

}  // namespace knod::diff
