// Control transfer: bpf_tail_call (12), bpf_redirect (23), bpf_redirect_map (51).
// Sources: kernel/bpf/core.c (tail call: index, MAX_TAIL_CALL_CNT, empty slot fall through),
// net/core/filter.c bpf_xdp_redirect, __bpf_xdp_redirect_map (kernel/bpf/devmap.c,
// cpumap.c, net/xdp/xskmap.c lookups).
//
// Targets come from the maps' accessors: ProgArray::get (program index into Env::programs),
// DevMap::get (struct bpf_devmap_val), CpuMap::get, XskMap::get.
#include <algorithm>
#include <cstring>
#include <vector>

#include "device/batch.h"
#include "maps/cpumap.h"
#include "maps/devmap.h"
#include "maps/prog_array.h"
#include "maps/xskmap.h"
#include "vm/tail_call.h"
#include "xdp/buff.h"
#include "xdp/helpers.h"

namespace knod::xdp {
namespace {

// bpf_tail_call(ctx, prog_array, index): on success the executor continues in the target
// with the same ctx (and counts the call); on failure execution falls through to the next
// instruction. As kernel 6.18 (checked by the differential tests): only taken tail calls
// count towards MAX_TAIL_CALL_CNT, whether the index is a constant or not.
uint64_t tail_call(vm::Run& run, uint64_t ctx, uint64_t m, uint64_t index, uint64_t, uint64_t) {
  if (ctx != run.ctx_lo) {
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  maps::Map* map = run.map_arg(m);
  if (!map) return 0;
  if (map->def().type != BPF_MAP_TYPE_PROG_ARRAY) {  // maps::create_map: a ProgArray
    run.fault = vm::Fault::kBadHelper;
    return 0;
  }
  return vm::tail_call_to(run, *static_cast<maps::ProgArray*>(map), index);
}

// bpf_redirect(ifindex, flags): XDP_REDIRECT to a device; any flag → XDP_ABORTED.
uint64_t redirect(vm::Run& run, uint64_t ifindex, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  if (flags) return XDP_ABORTED;
  auto* b = static_cast<Buff*>(run.prog_state);
  if (b) b->redirect = device::redirect_encode(device::RedirectKind::kIfindex, uint32_t(ifindex));
  return XDP_REDIRECT;
}

int map_index(const vm::Run& run, const maps::Map* map) {
  for (size_t i = 0; i < run.env->maps.size(); ++i)
    if (run.env->maps[i].get() == map) return int(i);
  return -1;
}

// bpf_redirect_map(map, key, flags): the low two bits of flags are the action returned when
// the lookup fails; DEVMAP/DEVMAP_HASH also take BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS
// (broadcast succeeds even without an entry at key). Other flag bits → XDP_ABORTED.
uint64_t redirect_map(vm::Run& run, uint64_t m, uint64_t key, uint64_t flags, uint64_t, uint64_t) {
  maps::Map* map = run.map_arg(m);
  if (!map) return 0;
  const uint32_t type = map->def().type;
  const uint64_t action_mask = XDP_ABORTED | XDP_DROP | XDP_PASS | XDP_TX;
  uint64_t flag_mask = 0;
  const bool devmap = type == BPF_MAP_TYPE_DEVMAP || type == BPF_MAP_TYPE_DEVMAP_HASH;
  if (devmap) flag_mask = BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS;
  // maps::create_map makes a DevMap, CpuMap or XskMap for these types.
  if (!devmap && type != BPF_MAP_TYPE_CPUMAP && type != BPF_MAP_TYPE_XSKMAP) {
    run.fault = vm::Fault::kBadHelper;  // verifier: map type not allowed for redirect_map
    return 0;
  }
  if (flags & ~(action_mask | flag_mask)) return XDP_ABORTED;
  auto* b = static_cast<Buff*>(run.prog_state);
  const uint32_t k = uint32_t(key);
  uint32_t ifindex = 0;
  bool found = false;
  if (devmap) {
    const bpf_devmap_val* v = static_cast<maps::DevMap*>(map)->get(k);
    found = v != nullptr;
    if (v) ifindex = v->ifindex;
  } else if (type == BPF_MAP_TYPE_CPUMAP) {
    found = static_cast<maps::CpuMap*>(map)->get(k) != nullptr;
  } else {
    found = static_cast<maps::XskMap*>(map)->get(k) >= 0;
  }
  if (!found && !(flags & BPF_F_BROADCAST)) {
    if (b) b->redirect = 0;
    return flags & action_mask;
  }
  uint64_t target = 0;
  if (flags & BPF_F_BROADCAST) {
    target =
        device::redirect_encode(device::RedirectKind::kBroadcast, uint32_t(map_index(run, map)),
                                uint32_t(flags & (BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS)));
  } else if (devmap) {
    target = device::redirect_encode(device::RedirectKind::kIfindex, ifindex);
  } else if (type == BPF_MAP_TYPE_CPUMAP) {
    target = device::redirect_encode(device::RedirectKind::kCpu, k);
  } else {
    target = device::redirect_encode(device::RedirectKind::kXsk, k);
  }
  if (b) b->redirect = target;
  return XDP_REDIRECT;
}

}  // namespace

void add_redirect_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_tail_call, "bpf_tail_call", tail_call);
  set_helper(t, BPF_FUNC_redirect, "bpf_redirect", redirect);
  set_helper(t, BPF_FUNC_redirect_map, "bpf_redirect_map", redirect_map);
}

}  // namespace knod::xdp
