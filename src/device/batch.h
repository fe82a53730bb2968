// The batch ABI shared by every device (cpu, cuda, amdgpu): a structure of arrays a GPU can
// take as is. Packet i lives in slot i: frames + i * stride, a frame of frame_size(b) bytes
// with XDP_PACKET_HEADROOM (256 B) of headroom before the data, tailroom after (kernel
// bpf_prog_test_run_xdp layout).
#pragma once

#include <cstdint>

namespace knod::device {

/// Where a redirected packet goes (bpf_redirect / bpf_redirect_map), recorded per packet.
enum class RedirectKind : uint8_t { kNone = 0, kIfindex, kCpu, kXsk, kBroadcast };

/// Encodes a redirect target: kind in bits 56-63, flags (BPF_F_*) in 32-55, value in 0-31.
inline uint64_t redirect_encode(RedirectKind k, uint32_t value, uint32_t flags = 0) {
  return (uint64_t(k) << 56) | (uint64_t(flags & 0xffffff) << 32) | value;
}
inline RedirectKind redirect_kind(uint64_t r) {
  return RedirectKind(r >> 56);
}
inline uint32_t redirect_value(uint64_t r) {
  return uint32_t(r);
}
inline uint32_t redirect_flags(uint64_t r) {
  return uint32_t(r >> 32) & 0xffffff;
}

/// A batch of packets. All arrays have `count` entries; the caller owns the memory.
/// In: frames, data_off (= headroom), data_len, ingress_ifindex, rx_queue_index.
/// Out: data_off/data_len (after adjust_head/tail), meta_len, verdict, redirect, fault.
struct Batch {
  uint32_t count = 0;            ///< packets
  uint32_t stride = 0;           ///< bytes from one slot to the next (>= the frame size)
  uint8_t* frames = nullptr;     ///< count * stride bytes
  uint32_t* data_off = nullptr;  ///< bytes from slot start to the packet data
  uint32_t* data_len = nullptr;  ///< packet bytes
  uint32_t* meta_len = nullptr;  ///< metadata bytes just before data (bpf_xdp_adjust_meta)
  uint32_t* ingress_ifindex = nullptr;
  uint32_t* rx_queue_index = nullptr;
  uint32_t* verdict = nullptr;   ///< enum xdp_action (XDP_ABORTED..XDP_REDIRECT)
  uint64_t* redirect = nullptr;  ///< redirect_encode(...) for XDP_REDIRECT, else 0
  uint8_t* fault = nullptr;      ///< vm::Fault that aborted the packet, else 0
  /// Per packet, ns: what the time helpers (bpf_ktime_get_ns...) read for it, e.g. its
  /// capture timestamp (`knod run --pcap-clock`); null: the device's clock. CPU devices only.
  uint64_t* clock_ns = nullptr;
  /// Bytes of each slot's frame (xdp_buff.frame_sz: the tailroom at its end is never the
  /// program's); 0: the whole stride. Only the CPU device takes a stride above the frame
  /// size (kSlotPitch); a GPU device refuses such a batch.
  uint32_t frame_sz = 0;
};

/// The frame size of b's slots (bytes): frame_sz, or the stride when it is 0 or larger (a
/// frame never reaches into the next slot).
inline uint32_t frame_size(const Batch& b) {
  return b.frame_sz && b.frame_sz < b.stride ? b.frame_sz : b.stride;
}

constexpr uint32_t kXdpHeadroom = 256;  ///< XDP_PACKET_HEADROOM
constexpr uint32_t kFrameSize = 4096;   ///< PAGE_SIZE frame used by test_run
/// SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on x86-64: the tailroom test_run keeps.
constexpr uint32_t kTailroom = 320;
constexpr uint32_t kMaxPacket = kFrameSize - kXdpHeadroom - kTailroom;  ///< 3520 B
/// The CPU device's slot stride (device::BatchStore): one line more than a frame. Slots a
/// page apart put every packet's first lines into the same few cache sets (an L2 set of a
/// 16-way 1 MiB cache holds 16 of them), so a batch of 1024 packets missed the L2 on every
/// packet; one line further apart they spread over all sets (docs/PERFORMANCE.md,
/// session 20: icmp_echo 6.9 -> 5.3 ns/packet, mean of the rounds).
constexpr uint32_t kSlotPitch = kFrameSize + 64;

}  // namespace knod::device
