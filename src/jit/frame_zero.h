// Which bytes of a frame the JIT must zero at entry so that a program sees the zeroed frame
// the reference interpreter gives it: the bytes some path may read before any path-wide
// write (a must-be-written forward data-flow over the subprogram's control flow, meet =
// intersection). The kernel's verifier refuses such reads from programs loaded without
// CAP_PERFMON ("invalid read from stack"): a program that passes it needs no zeroing at all.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/insn.h"

namespace knod::jit {

/// Bytes [r10 + off, r10 + off + n) of the frame (off negative); n = 0: none.
struct StackRange {
  int32_t off = 0;
  uint32_t n = 0;
};

/// How one instruction uses the frame: what it may read (a load; an atomic's operand; a
/// helper's stack arguments: the sizes its prototype gives, else from the pointer up to r10),
/// then what it writes in full (a store; an atomic).
struct StackUse {
  StackRange read[2];
  StackRange write;
};

/// Bytes to zero, [r10 - deep, r10 - shallow), multiples of 16; deep == shallow: none.
struct FrameZero {
  uint32_t deep = 0;
  uint32_t shallow = 0;
  bool operator==(const FrameZero&) const = default;
};

/// The frame bytes subprogram [lo, hi) of `insns` may read before writing them, given each
/// instruction's use (`uses`, indexed by pc, every stack access of the subprogram at a
/// known offset) and which pcs are reachable (`reachable`, indexed by pc - lo). Paths are
/// every branch's both ways (a superset of the feasible ones: more zeroing, never less).
FrameZero frame_zero(const InsnVec& insns, uint32_t lo, uint32_t hi,
                     const std::vector<StackUse>& uses, const std::vector<bool>& reachable);

}  // namespace knod::jit
