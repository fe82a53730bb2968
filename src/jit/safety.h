// Range analysis for the JIT's memory accesses: which LDX/ST/STX/atomic instructions are
// provably in bounds and need no run-time check. A forward data-flow over each subprogram
// (join = equal or unknown; packet range = minimum) tracks registers that hold
//   r10 + c (stack),   ctx + c (CtxKind::kXdp: r1 at entry),   data + c (packet pointer
//   from xdp_md->data), data_end, and scalar constants.
// A stack access r10 + c + off of `size` bytes is proven when -512 <= c+off and c+off+size <= 0.
// A packet access data + c + off is proven when 0 <= c+off and c+off+size <= N, N being the
// largest bound established on every path by a `data + N > data_end` style comparison
// (kernel verifier's find_good_pkt_pointers). Helper calls drop packet facts (they may move
// the packet, bpf_xdp_adjust_head). With map descriptions (LowerOptions::maps), an ld_imm64
// naming a map is tracked, bpf_map_lookup_elem on a map whose values are typed gives
// "value or NULL" (an id shared by its copies), a `== 0` / `!= 0` test splits it into NULL and
// a map value pointer, and value + c + off of `size` bytes is proven when 0 <= c+off and
// c+off+size <= value_size (stores only for writable maps). A call overwrites the copies of an
// earlier result of the same call site (loops). Everything else is checked at run time.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/insn.h"
#include "jit/frame_zero.h"
#include "jit/lower.h"

namespace knod::jit {

enum class AccessKind : uint8_t {
  kNone = 0,     ///< not a memory access, or unreachable
  kChecked,      ///< needs a run-time check
  kStack,        ///< proven: frame pointer + `off`
  kPacket,       ///< proven: inside the packet bytes checked against data_end
  kCtx,          ///< ctx object at constant byte offset `off` (a load rewritten by ctx_load)
  kMapValue,     ///< proven: inside the value of map `map` (non-NULL after a test)
  kArrayLookup,  ///< a bpf_map_lookup_elem call on map `map` (MapDesc::values set) with the
                 ///< 4-byte key on the stack at r10 + `off` or in proven packet bytes at r2
                 ///< (`packet_key`): may be inlined
  kHashLookup,   ///< the same on a HASH-family map (MapDesc::hash set), key_size bytes of key
  kMapLookup,    ///< the same on another map of this process (MapDesc::host): its lookup is
                 ///< called directly
  kTailCall,     ///< a bpf_tail_call with the ctx in r1 and PROG_ARRAY map `map` of this
                 ///< process (MapDesc::host) in r2: its slot is read directly
  kXdpAdjust,    ///< bpf_xdp_adjust_head or bpf_xdp_adjust_meta (helper id in `off`) with
                 ///< the ctx in r1: xdp::Buff::adjust_head / adjust_meta called directly
};

struct AccessInfo {
  AccessKind kind = AccessKind::kNone;
  int32_t off = 0;   ///< kStack, k*Lookup: byte offset from r10 (negative); kCtx: in the ctx;
                     ///< kXdpAdjust: the helper id
  int32_t map = -1;  ///< kMapValue, k*Lookup: index into the MapDesc list
  bool packet_key = false;  ///< k*Lookup: the key is the packet bytes r2 points at, not the stack
  /// kChecked: the base is a packet or map value pointer, which never lands in the frame: the
  /// run-time check leaves the stack's region out (knod_rt_check_off_stack), so that the
  /// analysis keeps the frame's spilled slots across the access.
  bool off_stack = false;
};

/// Classifies every instruction of `insns`. `subs`: sorted entry pcs of the subprograms
/// (0 first); `maps`: what ld_imm64 values name (may be empty). Result is indexed by pc.
/// `frame` (if given), per subprogram (index as in `subs`): the bytes below r10 to zero at
/// entry for the program to see the zeroed frame the interpreter gives it. When every stack
/// access and helper stack argument is at a known offset, those a path may read before
/// writing them (jit/frame_zero.h; none for a program that writes what it reads); the whole
/// frame (kStackSize) when a stack address escapes the analysis (spilled, made a scalar or
/// an unknown pointer, compared with a number, lost at a join), an access that may land in
/// the frame is checked at run time, or the program has subprograms (callees and callbacks
/// may reach their callers' frames).
std::vector<AccessInfo> analyze_accesses(const InsnVec& insns, const std::vector<uint32_t>& subs,
                                         CtxKind ctx, const std::vector<MapDesc>& maps = {},
                                         std::vector<FrameZero>* frame = nullptr);

}  // namespace knod::jit
