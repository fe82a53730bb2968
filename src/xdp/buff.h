// The XDP packet buffer of one run (kernel `struct xdp_buff`) and the `struct xdp_md` ctx
// rewriting (net/core/filter.c xdp_convert_ctx_access, xdp_is_valid_access).
// Layout as BPF_PROG_TEST_RUN builds it (net/bpf/test_run.c bpf_prog_test_run_xdp): a frame of
// frame_sz bytes, XDP_PACKET_HEADROOM before the data, SKB_DATA_ALIGN(skb_shared_info)
// tailroom that the program may not grow into.
#pragma once

#include <cerrno>
#include <cstdint>

#include "vm/abi.h"

namespace knod::xdp {

constexpr uint32_t kEthHlen = 14;         ///< ETH_HLEN: the least a packet may shrink to
constexpr uint32_t kXdpFrameSize = 40;    ///< sizeof(struct xdp_frame) on 64-bit: kept free
                                          ///< at data_hard_start (bpf_xdp_adjust_head/meta)
constexpr uint32_t kXdpMdSize = 24;       ///< sizeof(struct xdp_md)
constexpr uint32_t kMaxMetaLen = 252;     ///< xdp_metalen_invalid(): u8 meta_len, 4-aligned
constexpr uint32_t kLoopbackIfindex = 1;  ///< test_run's rxq is loopback_dev queue 0

/// One packet: addresses in the executor's (= host) address space.
struct Buff {
  uint64_t data_hard_start = 0;
  uint64_t data_meta = 0;  ///< == data when there is no metadata
  uint64_t data = 0;
  uint64_t data_end = 0;
  uint32_t frame_sz = 0;  ///< bytes from data_hard_start to the frame end (incl. tailroom)
  uint32_t ingress_ifindex = kLoopbackIfindex;
  uint32_t rx_queue_index = 0;
  uint32_t egress_ifindex = 0;  ///< 0: not a BPF_XDP_DEVMAP program run
  int packet_region = -1;       ///< index of [data_meta, data_end) in Run::regions

  /// bpf_redirect_info of the run: device::redirect_encode(...) of the last successful
  /// bpf_redirect / bpf_redirect_map, 0 after a failed lookup.
  uint64_t redirect = 0;
  uint64_t held_lock = 0;  ///< address of a bpf_spin_lock held by the program, or 0

  alignas(8) uint8_t ctx[kXdpMdSize] = {};  ///< the ctx object r1 points at (never read)

  /// Sets the layout: frame of frame_sz bytes, packet at data_off with data_len bytes and
  /// meta_len bytes of metadata just before it. Inline: once per packet on the hot path.
  void init(uint8_t* frame, uint32_t fsz, uint32_t data_off, uint32_t data_len, uint32_t mlen) {
    data_hard_start = reinterpret_cast<uint64_t>(frame);
    frame_sz = fsz;
    data = data_hard_start + data_off;
    data_meta = data - mlen;
    data_end = data + data_len;
  }
  /// Hooks the buffer into `run`: ctx range and accessors, prog_state, the packet region.
  /// Returns false when the run has no free region.
  bool attach(vm::Run& run);
  /// bpf_xdp_adjust_head's work (net/core/filter.c): data moves by `offset` bytes within
  /// [data_hard_start + sizeof(xdp_frame) + metalen, data_end - ETH_HLEN], the metadata with
  /// it. Returns 0, or -EINVAL (nothing moved). The JIT calls it directly (jit/executor.cpp
  /// knod_host_xdp_adjust) where r1 is proven to be the ctx; the helper calls it too.
  int64_t adjust_head(vm::Run& run, int32_t offset) {
    const uint64_t metalen = meta_len();
    const uint64_t start = data_hard_start + kXdpFrameSize + metalen;
    const uint64_t moved = data + int64_t(offset);
    if (int64_t(moved - start) < 0 || int64_t(moved - (data_end - kEthHlen)) > 0) return -EINVAL;
    if (metalen)
      __builtin_memmove(reinterpret_cast<void*>(data_meta + int64_t(offset)),
                        reinterpret_cast<void*>(data_meta), metalen);
    data_meta += int64_t(offset);
    data = moved;
    sync(run);
    return 0;
  }
  /// bpf_xdp_adjust_meta's work: data_meta moves by `offset` bytes within [data_hard_start +
  /// sizeof(xdp_frame), data]; the metadata length must stay a multiple of 4 and fit
  /// skb_shared_info.meta_len (u8). Returns 0, -EINVAL or -EACCES (nothing moved).
  int64_t adjust_meta(vm::Run& run, int32_t offset) {
    const uint64_t meta = data_meta + int64_t(offset);
    if (int64_t(meta - (data_hard_start + kXdpFrameSize)) < 0 || int64_t(meta - data) > 0)
      return -EINVAL;
    const uint64_t metalen = data - meta;
    if (metalen % 4 != 0 || metalen > kMaxMetaLen) return -EACCES;
    data_meta = meta;
    sync(run);
    return 0;
  }
  /// Re-publishes [data_meta, data_end) after a helper moved head, meta or tail.
  void sync(vm::Run& run) const {
    if (packet_region >= 0) run.regions[packet_region] = vm::Region{data_meta, data_end, true};
  }

  uint64_t data_hard_end() const;  ///< xdp_data_hard_end(): frame end minus the tailroom
  uint32_t len() const { return uint32_t(data_end - data); }
  uint32_t meta_len() const { return uint32_t(data - data_meta); }
};

/// The run's Buff when `ctx` is the run's ctx pointer; else nullptr and run.fault =
/// kBadHelper (the kernel's verifier only lets a PTR_TO_CTX through).
inline Buff* buff_of(vm::Run& run, uint64_t ctx) {
  auto* b = static_cast<Buff*>(run.prog_state);
  if (!b || ctx != run.ctx_lo || run.ctx_lo == 0) {
    run.fault = vm::Fault::kBadHelper;
    return nullptr;
  }
  return b;
}

/// CtxLoadFn for struct xdp_md: u32 loads at 0 data, 4 data_end, 8 data_meta (64-bit
/// pointers), 12 ingress_ifindex, 16 rx_queue_index, 20 egress_ifindex. Anything else
/// (other sizes, unaligned, out of range) is rejected (kCtxAccess).
bool ctx_load(vm::Run& run, uint32_t off, uint32_t size, uint64_t* value);
/// CtxStoreFn: XDP programs may not write their ctx (xdp_is_valid_access), always false.
bool ctx_store(vm::Run& run, uint32_t off, uint32_t size, uint64_t value);

}  // namespace knod::xdp
