// bpf_fib_lookup (69) and bpf_check_mtu (163) against the runtime's FibTable
// (net/core/filter.c bpf_xdp_fib_lookup, bpf_ipv4_fib_lookup, bpf_ipv6_fib_lookup,
// bpf_xdp_check_mtu). The ingress device of test_run is loopback (ifindex 1, MTU 65536,
// forwarding off) unless the table defines ifindex 1. BPF_FIB_LOOKUP_DIRECT/TBID use the one
// table; BPF_FIB_LOOKUP_SRC leaves the source address as it is (the table has none).
#include <arpa/inet.h>

#include <cstring>

#include "xdp/buff.h"
#include "xdp/helpers.h"
#include "xdp/runtime.h"

namespace knod::xdp {
namespace {

static_assert(sizeof(bpf_fib_lookup) == 64);
constexpr uint32_t kFibFlags = 0x3f;     // DIRECT | OUTPUT | SKIP_NEIGH | TBID | SRC | MARK
constexpr uint32_t kHardHeaderLen = 14;  // dev->hard_header_len of Ethernet and loopback

/// The run's FibTable (Runtime::Options::fib), or null: no table, the loopback alone.
const FibTable* table(const vm::Run& run) {
  const Runtime* rt = runtime_of(run);
  return rt ? rt->options().fib.get() : nullptr;
}

/// The device `ifindex` (dev_get_by_index), with the implicit loopback; null if absent.
const FibIface* device(const FibTable* t, uint32_t ifindex) {
  static constexpr FibIface kLoopback{kLoopbackIfindex, {}, 65536, false};
  if (t)
    if (const FibIface* i = t->iface(ifindex)) return i;
  return ifindex == kLoopbackIfindex ? &kLoopback : nullptr;
}

uint64_t fib_lookup(vm::Run& run, uint64_t ctx, uint64_t params, uint64_t plen, uint64_t flags,
                    uint64_t) {
  if (!buff_of(run, ctx)) return 0;
  const int len = int32_t(plen);
  if (len <= 0 || !arg_mem(run, params, uint32_t(len), true)) return 0;
  if (len < int(sizeof(bpf_fib_lookup))) return neg(EINVAL);
  if (uint32_t(flags) & ~kFibFlags) return neg(EINVAL);
  auto* p = ptr<bpf_fib_lookup>(params);
  FibAddr dst;
  dst.family = p->family;
  if (p->family == AF_INET)
    std::memcpy(dst.bytes.data(), &p->ipv4_dst, 4);
  else if (p->family == AF_INET6)
    std::memcpy(dst.bytes.data(), p->ipv6_dst, 16);
  else
    return neg(EAFNOSUPPORT);

  const FibTable* t = table(run);
  const FibIface* in = device(t, p->ifindex);
  if (!in) return neg(ENODEV);
  if (!in->forwarding) return BPF_FIB_LKUP_RET_FWD_DISABLED;
  const FibRoute* r = t ? t->route(dst) : nullptr;
  if (!r) return BPF_FIB_LKUP_RET_NOT_FWDED;  // -ENETUNREACH
  switch (r->type) {
    case RouteType::kBlackhole:
      return BPF_FIB_LKUP_RET_BLACKHOLE;
    case RouteType::kUnreachable:
      return BPF_FIB_LKUP_RET_UNREACHABLE;
    case RouteType::kProhibit:
      return BPF_FIB_LKUP_RET_PROHIBIT;
    case RouteType::kUnicast:
      break;
  }
  const FibIface* out = device(t, r->ifindex);
  if (!out) return BPF_FIB_LKUP_RET_NOT_FWDED;
  const uint32_t mtu = out->mtu;
  if (p->tot_len > mtu) {
    p->mtu_result = uint16_t(mtu);
    return BPF_FIB_LKUP_RET_FRAG_NEEDED;
  }
  p->rt_metric = r->metric;
  p->ifindex = out->ifindex;
  FibAddr next = dst;
  if (r->has_gateway && r->gateway.family == dst.family) {
    next = r->gateway;
    if (p->family == AF_INET)
      std::memcpy(&p->ipv4_dst, next.bytes.data(), 4);
    else
      std::memcpy(p->ipv6_dst, next.bytes.data(), 16);
  }
  if (!(flags & BPF_FIB_LOOKUP_SKIP_NEIGH)) {
    const FibNeighbour* n = t->neighbour(next, out->ifindex);  // a route: t is not null
    if (!n) return BPF_FIB_LKUP_RET_NO_NEIGH;
    std::memcpy(p->dmac, n->mac.data(), 6);
    std::memcpy(p->smac, out->mac.data(), 6);
  }
  p->h_vlan_TCI = 0;  // bpf_fib_set_fwd_params
  p->h_vlan_proto = 0;
  p->mtu_result = uint16_t(mtu);
  return BPF_FIB_LKUP_RET_SUCCESS;
}

// bpf_check_mtu(ctx, ifindex, *mtu_len, len_diff, flags): ifindex 0 = the ingress device.
uint64_t check_mtu(vm::Run& run, uint64_t ctx, uint64_t ifindex, uint64_t mtu_len,
                   uint64_t len_diff, uint64_t flags) {
  Buff* b = buff_of(run, ctx);
  if (!b || !arg_mem(run, mtu_len, 4, true)) return 0;
  if (flags) return neg(EINVAL);
  const FibIface* dev = device(table(run), ifindex ? uint32_t(ifindex) : b->ingress_ifindex);
  if (!dev) return neg(ENODEV);
  const int mtu = int(dev->mtu);
  const int dev_len = mtu + int(kHardHeaderLen);
  int xdp_len = int(b->len());
  uint32_t in;
  std::memcpy(&in, ptr<void>(mtu_len), 4);
  if (in) xdp_len = int(in) + int(kHardHeaderLen);
  xdp_len += int32_t(len_diff);
  const uint64_t ret = xdp_len > dev_len ? BPF_MTU_CHK_RET_FRAG_NEEDED : BPF_MTU_CHK_RET_SUCCESS;
  const uint32_t out = uint32_t(mtu);
  std::memcpy(ptr<void>(mtu_len), &out, 4);
  return ret;
}

}  // namespace

void add_fib_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_fib_lookup, "bpf_fib_lookup", fib_lookup, kGplOnly);
  set_helper(t, BPF_FUNC_check_mtu, "bpf_check_mtu", check_mtu, kGplOnly);
}

}  // namespace knod::xdp
