// Range analysis (jit/safety.h): which accesses are proven (stack at constant r10 offsets,
// packet bytes below a data_end comparison, xdp_md fields) and which stay checked.
#include "jit/safety.h"

#include <gtest/gtest.h>
#include <linux/bpf.h>

#include "isa/asm.h"
#include "jit/cfg.h"

namespace knod::jit {
namespace {

std::vector<AccessInfo> analyze(const char* text, CtxKind ctx = CtxKind::kOpaque) {
  InsnVec p = isa::assemble(text);
  return analyze_accesses(p, find_subprograms(p), ctx);
}

TEST(JitSafety, StackAtConstantOffsetsIsProven) {
  auto a = analyze(R"(
    stxdw [%r10-8], %r1
    ldxdw %r0, [%r10-8]
    mov %r2, %r10
    add %r2, -16
    stw [%r2+4], 7
    ldxb %r0, [%r10-512]
    exit)");
  EXPECT_EQ(a[0].kind, AccessKind::kStack);
  EXPECT_EQ(a[0].off, -8);
  EXPECT_EQ(a[1].kind, AccessKind::kStack);
  EXPECT_EQ(a[4].kind, AccessKind::kStack);
  EXPECT_EQ(a[4].off, -12);
  EXPECT_EQ(a[5].kind, AccessKind::kStack);
  EXPECT_EQ(a[5].off, -512);
  EXPECT_EQ(a[2].kind, AccessKind::kNone);  // not an access
}

TEST(JitSafety, StackOutsideTheFrameIsChecked) {
  auto a = analyze(R"(
    ldxdw %r0, [%r10+0]
    ldxdw %r0, [%r10-4]
    ldxb %r0, [%r10-513]
    mov %r2, %r10
    add %r2, %r3
    ldxb %r0, [%r2-1]
    exit)");
  EXPECT_EQ(a[0].kind, AccessKind::kChecked);  // [r10, r10+8) is above the frame
  EXPECT_EQ(a[1].kind, AccessKind::kChecked);  // crosses r10
  EXPECT_EQ(a[2].kind, AccessKind::kChecked);
  EXPECT_EQ(a[5].kind, AccessKind::kChecked);  // unknown offset
}

constexpr const char* kParse = R"(
    ldxw %r2, [%r1+0]
    ldxw %r3, [%r1+4]
    mov %r4, %r2
    add %r4, 14
    jgt %r4, %r3, drop
    ldxb %r0, [%r2+13]
    ldxh %r0, [%r2+12]
    ldxb %r0, [%r2+14]
    ldxw %r0, [%r2+12]
    exit
  drop:
    ldxb %r0, [%r2+0]
    exit)";

TEST(JitSafety, PacketBelowDataEndCheckIsProven) {
  auto a = analyze(kParse, CtxKind::kXdp);
  EXPECT_EQ(a[0].kind, AccessKind::kCtx);
  EXPECT_EQ(a[0].off, 0);
  EXPECT_EQ(a[1].kind, AccessKind::kCtx);
  EXPECT_EQ(a[1].off, 4);
  EXPECT_EQ(a[5].kind, AccessKind::kPacket);    // byte 13 < 14
  EXPECT_EQ(a[6].kind, AccessKind::kPacket);    // bytes 12-13
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);   // byte 14 not covered
  EXPECT_EQ(a[8].kind, AccessKind::kChecked);   // bytes 12-15
  EXPECT_EQ(a[10].kind, AccessKind::kChecked);  // taken edge: data + 14 > data_end
}

TEST(JitSafety, OpaqueCtxChecksEverything) {
  auto a = analyze(kParse, CtxKind::kOpaque);
  for (int pc : {0, 1, 5, 6, 7, 8, 10}) EXPECT_EQ(a[pc].kind, AccessKind::kChecked) << pc;
}

TEST(JitSafety, ReversedComparisonAndJoin) {
  auto a = analyze(R"(
    ldxw %r2, [%r1+0]
    ldxw %r3, [%r1+4]
    jeq %r5, 0, short
    mov %r4, %r2
    add %r4, 34
    jlt %r3, %r4, drop
    ldxw %r0, [%r2+30]
    ja join
  short:
    mov %r4, %r2
    add %r4, 20
    jgt %r4, %r3, drop
  join:
    ldxw %r0, [%r2+30]
    ldxw %r0, [%r2+16]
    exit
  drop:
    mov %r0, 1
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[6].kind, AccessKind::kPacket);    // !(end < data + 34)
  EXPECT_EQ(a[11].kind, AccessKind::kChecked);  // join: only 20 bytes on the `short` path
  EXPECT_EQ(a[12].kind, AccessKind::kPacket);   // 16 + 4 <= min(34, 20)
}

TEST(JitSafety, HelperCallsForgetPacketBounds) {
  auto a = analyze(R"(
    ldxw %r6, [%r1+0]
    ldxw %r7, [%r1+4]
    mov %r4, %r6
    add %r4, 8
    jgt %r4, %r7, out
    ldxb %r0, [%r6+0]
    call 44
    ldxb %r0, [%r6+0]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[5].kind, AccessKind::kPacket);
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);  // bpf_xdp_adjust_head may move data
}

// xdp_md->data_meta is a metadata pointer whose bound is data itself (the kernel's
// PTR_TO_PACKET_META): `meta + 4 > data` proves its first 4 bytes, in either operand order;
// a comparison with data_end proves nothing about it. bpf_xdp_adjust_meta and adjust_head
// with the ctx in r1 are kXdpAdjust (inlined) and forget every packet and metadata bound.
TEST(JitSafety, MetadataBelowDataIsProven) {
  auto a = analyze(R"(
    ldxw %r6, [%r1+8]
    ldxw %r7, [%r1+0]
    ldxw %r8, [%r1+4]
    mov %r2, %r6
    add %r2, 4
    jgt %r2, %r7, out
    ldxw %r0, [%r6+0]
    ldxb %r0, [%r6+4]
    jlt %r7, %r2, out
    stw [%r6+0], 1
    jgt %r2, %r8, out
    ldxw %r0, [%r6+0]
    call 54
    ldxw %r0, [%r6+0]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[0].kind, AccessKind::kCtx);
  EXPECT_EQ(a[0].off, 8);
  EXPECT_EQ(a[6].kind, AccessKind::kPacket);   // meta + 4 <= data
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);  // byte 4 not covered
  EXPECT_EQ(a[9].kind, AccessKind::kPacket);   // !(data < meta + 4): the swapped form
  EXPECT_EQ(a[11].kind, AccessKind::kPacket);  // still proven by the data test
  EXPECT_EQ(a[12].kind, AccessKind::kXdpAdjust);
  EXPECT_EQ(a[12].off, 54);
  EXPECT_EQ(a[13].kind, AccessKind::kChecked);  // adjust_meta moved data_meta
}

TEST(JitSafety, MetadataAgainstDataEndProvesNothing) {
  auto a = analyze(R"(
    ldxw %r6, [%r1+8]
    ldxw %r8, [%r1+4]
    mov %r2, %r6
    add %r2, 4
    jgt %r2, %r8, out
    ldxw %r0, [%r6+0]
    mov %r1, 0
    call 44
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[5].kind, AccessKind::kChecked);
  EXPECT_EQ(a[7].kind, AccessKind::kNone);  // r1 is not the ctx: the helper, not inlined
}

// A parser that returns a bounds-checked header or NULL (`th = ok ? l4 : NULL`): the join of
// the packet pointer and 0 keeps what was proven about the pointer, and a NULL test gives it
// back (the kernel verifier explores both paths instead).
TEST(JitSafety, PacketPointerOrNullAfterANullTest) {
  auto a = analyze(R"(
    mov %r7, 0
    ldxw %r3, [%r1+0]
    ldxw %r4, [%r1+4]
    ldxw %r1, [%r10-8]
    jgt %r1, 512, out
    add %r3, %r1
    mov %r1, %r3
    add %r1, 20
    jgt %r1, %r4, out
    mov %r7, %r3
  out:
    call 5
    jeq %r7, 0, null
    ldxh %r0, [%r7+18]
    ldxw %r0, [%r7+18]
    exit
  null:
    ldxb %r0, [%r7+0]
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[12].kind, AccessKind::kPacket);   // 18 + 2 <= 20 proven on the non-NULL edge
  EXPECT_EQ(a[13].kind, AccessKind::kChecked);  // 18 + 4 > 20
  EXPECT_EQ(a[15].kind, AccessKind::kChecked);  // NULL
}

// Registers spilled to the stack with stxdw and filled back with ldxdw keep their type (the
// kernel's spilled_ptr): the ctx, a proven packet pointer. A helper that changes the packet
// forgets the packet pointer but not the ctx.
TEST(JitSafety, SpilledPointersComeBackTyped) {
  auto a = analyze(R"(
    stxdw [%r10-8], %r1
    mov %r1, 0
    ldxdw %r6, [%r10-8]
    ldxw %r2, [%r6+0]
    ldxw %r3, [%r6+4]
    mov %r4, %r2
    add %r4, 8
    jgt %r4, %r3, out
    stxdw [%r10-16], %r2
    call 5
    ldxdw %r5, [%r10-16]
    ldxw %r0, [%r5+4]
    call 65
    ldxdw %r5, [%r10-16]
    ldxw %r0, [%r5+4]
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[3].kind, AccessKind::kCtx);       // the filled ctx: xdp_md->data
  EXPECT_EQ(a[4].kind, AccessKind::kCtx);       // xdp_md->data_end
  EXPECT_EQ(a[11].kind, AccessKind::kPacket);   // the filled packet pointer, 4 + 4 <= 8
  EXPECT_EQ(a[14].kind, AccessKind::kChecked);  // after bpf_xdp_adjust_tail
  EXPECT_EQ(a[16].kind, AccessKind::kCtx);      // the ctx slot survived it
}

// What makes a slot forget its value: a narrower store into it, a store the analysis cannot
// place (it may land in the frame), a helper that writes through a pointer into the frame.
TEST(JitSafety, StoresAndWritingHelpersForgetSpills) {
  auto a = analyze(R"(
    stxdw [%r10-8], %r1
    stw [%r10-4], 0
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    stxdw [%r10-8], %r1
    stw [%r2+0], 0
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    stxdw [%r10-8], %r1
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    mov %r2, %r10
    add %r2, -64
    call 69
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[3].kind, AccessKind::kChecked);   // half the slot overwritten
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);   // a store through an unknown pointer
  EXPECT_EQ(a[10].kind, AccessKind::kCtx);      // spilled again: typed
  EXPECT_EQ(a[15].kind, AccessKind::kChecked);  // bpf_fib_lookup with a stack pointer
}

// A checked store through a packet or map value pointer keeps the slots: its run-time check
// leaves the stack's region out (AccessInfo::off_stack), so it cannot land in the frame. vlan
// spills its map value pointer and stores through a packet pointer the analysis cannot
// prove (the kernel proves it path by path) before reading through the filled pointer.
TEST(JitSafety, ACheckedPacketStoreKeepsSpills) {
  auto a = analyze(R"(
    ldxw %r2, [%r1+0]
    ldxw %r3, [%r1+4]
    stxdw [%r10-8], %r1
    stxdw [%r10-16], %r2
    stb [%r2+20], 1
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    stb [%r6+40], 1
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    stb [%r7+0], 1
    ldxdw %r6, [%r10-8]
    ldxw %r0, [%r6+0]
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[4].kind, AccessKind::kChecked);  // packet byte 20: not proven
  EXPECT_TRUE(a[4].off_stack);
  EXPECT_EQ(a[6].kind, AccessKind::kCtx);      // the ctx slot survived it
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);  // past the ctx object: may be anywhere
  EXPECT_FALSE(a[7].off_stack);
  EXPECT_EQ(a[9].kind, AccessKind::kChecked);  // forgotten
  EXPECT_FALSE(a[10].off_stack);               // r7 unknown
  EXPECT_EQ(a[12].kind, AccessKind::kChecked);
}

TEST(JitSafety, HelpersThatKeepThePacketKeepBounds) {
  auto a = analyze(R"(
    ldxw %r6, [%r1+0]
    ldxw %r7, [%r1+4]
    mov %r4, %r6
    add %r4, 8
    jgt %r4, %r7, out
    call 5
    ldxb %r0, [%r6+7]
    ldxb %r0, [%r6+8]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[6].kind, AccessKind::kPacket);   // bpf_ktime_get_ns does not touch the packet
  EXPECT_EQ(a[7].kind, AccessKind::kChecked);  // beyond the 8 checked bytes
}

// VLAN or not: the L3 header pointer is data + x, x in [14, 18] after the join; `x + 20 <=
// data_end` proves data + 34, so accesses below 34 - 18 from it are proven (conservative:
// the kernel keeps the exact relation). The IPv4 IHL gives a bounded variable offset [0, 60]:
// r1 = data + [14, 78] is a new base B, and `B + 8 > data_end` proves its first 8 bytes.
TEST(JitSafety, OffsetIntervalsAndVariableOffsets) {
  auto a = analyze(R"(
    ldxw %r3, [%r1+0]
    ldxw %r9, [%r1+4]
    mov %r6, %r3
    add %r6, 14
    jgt %r6, %r9, out
    ldxh %r1, [%r3+12]
    jne %r1, 0x81, l3
    mov %r6, %r3
    add %r6, 18
    jgt %r6, %r9, out
  l3:
    mov %r1, %r6
    add %r1, 20
    jgt %r1, %r9, out
    ldxb %r2, [%r6+0]
    ldxw %r0, [%r6+12]
    ldxb %r0, [%r6+15]
    ldxb %r0, [%r6+20]
    lsh %r2, 2
    and %r2, 0x3c
    mov %r1, %r6
    add %r1, %r2
    mov %r2, %r1
    add %r2, 8
    jgt %r2, %r9, out
    ldxh %r0, [%r1+6]
    ldxh %r0, [%r1+8]
    ldxh %r0, [%r6+30]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[5].kind, AccessKind::kPacket);
  EXPECT_EQ(a[13].kind, AccessKind::kPacket);   // 18 + 0 + 1 <= 34
  EXPECT_EQ(a[14].kind, AccessKind::kPacket);   // 18 + 12 + 4 <= 34
  EXPECT_EQ(a[15].kind, AccessKind::kPacket);   // 18 + 15 + 1 <= 34
  EXPECT_EQ(a[16].kind, AccessKind::kChecked);  // past x + 20: may be out of the packet
  EXPECT_EQ(a[24].kind, AccessKind::kPacket);   // r1 = B (variable): B + 8 <= data_end
  EXPECT_EQ(a[25].kind, AccessKind::kChecked);  // bytes 8-9 past the checked 8
  EXPECT_EQ(a[26].kind, AccessKind::kChecked);  // 18 + 30 + 2 > 34
}

// A variable-offset packet pointer B (IHL): its own range from `B + c > data_end` tests, for
// every copy; not for a negative offset, a pointer made again (loop), or after adjust_head.
TEST(JitSafety, VariablePacketPointerHasItsOwnRange) {
  auto a = analyze(R"(
    ldxw %r3, [%r1+0]
    ldxw %r9, [%r1+4]
    mov %r6, %r3
    add %r6, 34
    jgt %r6, %r9, out
    ldxb %r2, [%r3+14]
    and %r2, 0xf
    lsh %r2, 2
    mov %r7, %r3
    add %r7, %r2
    ldxb %r0, [%r7+0]
    mov %r8, %r7
    add %r8, 20
    jgt %r8, %r9, out
    ldxb %r0, [%r7+19]
    ldxb %r0, [%r7+20]
    ldxb %r0, [%r8-1]
    ldxb %r0, [%r7-1]
    mov %r4, %r7
    call 44
    ldxb %r0, [%r4+0]
    ldxb %r0, [%r7+0]
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[10].kind, AccessKind::kChecked);  // before any test of B
  EXPECT_EQ(a[14].kind, AccessKind::kPacket);   // B + 19 < B + 20 <= data_end
  EXPECT_EQ(a[15].kind, AccessKind::kChecked);  // B + 20
  EXPECT_EQ(a[16].kind, AccessKind::kPacket);   // the tested copy itself: B + 19
  EXPECT_EQ(a[17].kind, AccessKind::kChecked);  // B - 1: no test covers it
  EXPECT_EQ(a[20].kind, AccessKind::kChecked);  // r4 is clobbered by the call
  EXPECT_EQ(a[21].kind, AccessKind::kChecked);  // bpf_xdp_adjust_head moved the packet
}

TEST(JitSafety, ALoopDoesNotLinkAnOlderVariablePointer) {
  // r6 keeps the previous iteration's pointer; testing the new r7 proves nothing for r6.
  auto a = analyze(R"(
    ldxw %r8, [%r1+0]
    ldxw %r9, [%r1+4]
    mov %r6, %r8
    mov %r5, 4
  loop:
    ldxb %r2, [%r10-1]
    mov %r7, %r8
    add %r7, %r2
    mov %r3, %r7
    add %r3, 8
    jgt %r3, %r9, out
    ldxb %r0, [%r6+7]
    ldxb %r0, [%r7+7]
    mov %r6, %r7
    add %r5, -1
    jne %r5, 0, loop
  out:
    exit)",
                   CtxKind::kXdp);
  EXPECT_EQ(a[10].kind, AccessKind::kChecked);  // r6: data (first pass) or an older B
  EXPECT_EQ(a[11].kind, AccessKind::kPacket);   // r7 = the B just tested
}

TEST(JitSafety, CtxLoadsPastXdpMdAreChecked) {
  // Past sizeof(struct xdp_md) (24) the address is not the ctx: checked like any address, so
  // the fault (kOutOfBounds) is the interpreter's.
  auto a =
      analyze("ldxw %r0, [%r1+20]\nldxw %r0, [%r1+64]\nldxdw %r0, [%r1+20]\nexit", CtxKind::kXdp);
  EXPECT_EQ(a[0].kind, AccessKind::kCtx);
  EXPECT_EQ(a[1].kind, AccessKind::kChecked);
  EXPECT_EQ(a[2].kind, AccessKind::kChecked);
}

TEST(JitSafety, LoopCounterIsNotAConstant) {
  auto a = analyze(R"(
    mov %r2, %r10
    add %r2, -8
  loop:
    stb [%r2+0], 1
    add %r2, -8
    jne %r3, 0, loop
    exit)");
  EXPECT_EQ(a[2].kind, AccessKind::kChecked);  // r2 = r10 - 8k
}

// bpf_tail_call reads the PROG_ARRAY slot directly when r1 is the ctx and r2 a PROG_ARRAY of
// this process; anything else stays the helper (which checks its arguments).
TEST(JitSafety, TailCallWithCtxAndKnownProgArray) {
  MapDesc d;
  d.addr = 0x2000;
  d.type = BPF_MAP_TYPE_PROG_ARRAY;
  d.key_size = d.value_size = 4;
  d.max_entries = 4;
  d.host = true;
  auto kind = [&](const char* r1, const MapDesc& m) {
    std::string t = std::string("mov %r6, %r1\nlddw %r2, 0x2000\nmov %r3, 1\nmov %r1, ") + r1 +
                    "\ncall 12\nmov %r0, 2\nexit";
    InsnVec p = isa::assemble(t);
    return analyze_accesses(p, find_subprograms(p), CtxKind::kXdp, {m})[5].kind;
  };
  EXPECT_EQ(kind("%r6", d), AccessKind::kTailCall);
  EXPECT_EQ(kind("%r7", d), AccessKind::kNone);  // r1 not the ctx: the helper faults
  MapDesc gpu = d;
  gpu.host = false;
  EXPECT_EQ(kind("%r6", gpu), AccessKind::kNone);
  MapDesc array = d;
  array.type = BPF_MAP_TYPE_ARRAY;
  EXPECT_EQ(kind("%r6", array), AccessKind::kNone);
}

// Bytes below r10 each subprogram zeroes at entry: those a path may read before writing them
// (the interpreter's zeroed frame, as far as the code can see it), [r10 - deep, r10 - shallow).
struct FrameCase {
  const char* name;
  const char* text;
  std::vector<FrameZero> zero;  ///< per subprogram
};

class JitFrameZero : public ::testing::TestWithParam<FrameCase> {};

TEST_P(JitFrameZero, WhatCodeMayReadUnwritten) {
  InsnVec p = isa::assemble(GetParam().text);
  std::vector<FrameZero> zero;
  analyze_accesses(p, find_subprograms(p), CtxKind::kXdp, {}, &zero);
  ASSERT_EQ(zero.size(), GetParam().zero.size());
  for (size_t k = 0; k < zero.size(); ++k) {
    EXPECT_EQ(zero[k].deep, GetParam().zero[k].deep) << "subprogram " << k;
    EXPECT_EQ(zero[k].shallow, GetParam().zero[k].shallow) << "subprogram " << k;
  }
}

constexpr FrameZero kWhole{512, 0};

// Helpers read what their prototype says through a stack argument: a map's key (or value)
// size, a size register's value; the bytes above stay unread.
TEST(JitFrameZero, HelpersReadWhatTheirPrototypeSays) {
  MapDesc hash;
  hash.addr = 0x2000;
  hash.type = BPF_MAP_TYPE_HASH;
  hash.key_size = 4;
  hash.value_size = 16;
  hash.values_typed = true;
  auto zero = [&](const std::string& text, std::vector<MapDesc> maps) {
    InsnVec p = isa::assemble(text);
    std::vector<FrameZero> z;
    analyze_accesses(p, find_subprograms(p), CtxKind::kXdp, maps, &z);
    return std::pair{z.at(0).deep, z.at(0).shallow};
  };
  const std::string lookup =
      "stw [%r10-32], 1\nmov %r2, %r10\nadd %r2, -32\nlddw %r1, 0x2000\n"
      "call 1\nexit";
  EXPECT_EQ(zero(lookup, {hash}), std::pair(0u, 0u));  // the 4-byte key, written
  EXPECT_EQ(zero(lookup, {}), std::pair(32u, 0u));     // no map known: up to r10
  // map_update_elem: key at -32 (4 bytes, written), value at -16 (16 bytes, 8 written).
  const std::string update =
      "stw [%r10-32], 1\nstdw [%r10-16], 2\nmov %r2, %r10\nadd %r2, -32\nmov %r3, %r10\n"
      "add %r3, -16\nlddw %r1, 0x2000\nmov %r4, 0\ncall 2\nexit";
  EXPECT_EQ(zero(update, {hash}), std::pair(16u, 0u));
  // csum_diff(from, 4, to, 0, 0): the 4 bytes written; from_size 8 reads 4 more.
  auto csum = [](int from_size) {
    return "stw [%r10-8], 1\nmov %r1, %r10\nadd %r1, -8\nmov %r2, " + std::to_string(from_size) +
           "\nmov %r3, 0\nmov %r4, 0\nmov %r5, 0\ncall 28\nexit";
  };
  EXPECT_EQ(zero(csum(4), {}), std::pair(0u, 0u));
  EXPECT_EQ(zero(csum(8), {}), std::pair(16u, 0u));
}

INSTANTIATE_TEST_SUITE_P(
    Table, JitFrameZero,
    ::testing::Values(
        FrameCase{"no_stack", "mov %r0, 2\nexit", {{0, 0}}},
        // Written before read on every path: nothing to zero (what the kernel accepts).
        FrameCase{"written_then_read", "stw [%r10-8], 1\nldxw %r0, [%r10-8]\nexit", {{0, 0}}},
        FrameCase{"spill_fill", "stxdw [%r10-16], %r1\nldxdw %r0, [%r10-16]\nexit", {{0, 0}}},
        // Read before any write: those bytes, rounded out to 16.
        FrameCase{"read_unwritten", "ldxb %r0, [%r10-1]\nstdw [%r10-40], 0\nexit", {{16, 0}}},
        FrameCase{"deep_read", "ldxb %r0, [%r10-512]\nexit", {{512, 496}}},
        FrameCase{"part_written", "stw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit", {{16, 0}}},
        FrameCase{"middle",
                  "stdw [%r10-8], 1\nldxdw %r0, [%r10-40]\nldxdw %r0, [%r10-8]\nexit",
                  {{48, 32}}},
        // Written on one path only: the join keeps what both paths wrote.
        FrameCase{"one_path",
                  "jeq %r1, 0, l\nstdw [%r10-8], 1\nl:\nldxdw %r0, [%r10-8]\nexit",
                  {{16, 0}}},
        FrameCase{"both_paths",
                  "jeq %r1, 0, l\nstdw [%r10-8], 1\nja m\nl:\nstdw [%r10-8], 2\nm:\n"
                  "ldxdw %r0, [%r10-8]\nexit",
                  {{0, 0}}},
        // An atomic add reads what it adds to.
        FrameCase{"atomic", "lock add [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", {{16, 0}}},
        // A helper (or callee) reads up from the pointer it is given: the key written first
        // needs nothing, the bytes above it that nothing wrote do.
        FrameCase{"helper_key_written",
                  "stw [%r10-4], 7\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit",
                  {{0, 0}}},
        FrameCase{"helper_key", "mov %r2, %r10\nadd %r2, -20\ncall 1\nexit", {{32, 0}}},
        FrameCase{"helper_key_part",
                  "stw [%r10-20], 7\nmov %r2, %r10\nadd %r2, -20\ncall 1\nexit",
                  {{16, 0}}},
        // A stack address the analysis loses: kept in memory, truncated to 32 bits, offset by
        // an unknown amount, or returned.
        FrameCase{"spilled", "stxdw [%r10-8], %r10\nmov %r0, 0\nexit", {kWhole}},
        FrameCase{"alu32", "mov32 %r1, %r10\nmov %r0, 0\nexit", {kWhole}},
        FrameCase{"variable_offset", "mov %r2, %r10\nadd %r2, %r3\ncall 1\nexit", {kWhole}},
        FrameCase{"returned", "mov %r0, %r10\nexit", {kWhole}},
        // ... or compared with a number: `if r10 < rX` rebuilds it bit by bit as a number
        // a helper then reads through (a helper's break-it find: map_update_elem read 8
        // bytes an earlier packet left at r10 - 256).
        FrameCase{"compared", "mov %r2, 0\njlt %r10, %r2, l\nl:\nmov %r0, 0\nexit", {kWhole}},
        FrameCase{"compared_imm", "jset %r10, 256, l\nl:\nmov %r0, 0\nexit", {kWhole}},
        FrameCase{"compared32", "mov %r2, 0\njlt32 %r10, %r2, l\nl:\nmov %r0, 0\nexit", {kWhole}},
        // Two stack addresses compared give nothing away (a loop over a stack buffer).
        FrameCase{"two_stack_addresses",
                  "stdw [%r10-16], 0\nstdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -16\n"
                  "mov %r2, %r10\nadd %r2, -8\njlt %r1, %r2, l\nl:\nmov %r0, 0\nexit",
                  {{0, 0}}},
        // A helper given an address above r10 reads no byte of this frame.
        FrameCase{"above_r10", "mov %r2, %r10\nadd %r2, 8\ncall 1\nexit", {{0, 0}}},
        // An access checked at run time may land anywhere in the frame...
        FrameCase{"checked_access", "ldxw %r0, [%r2+0]\nexit", {kWhole}},
        FrameCase{"checked_past_ctx", "ldxw %r0, [%r1+64]\nexit", {kWhole}},
        // ... unless its base is a packet (or map value) pointer: within 64 KiB of its object,
        // never the frame but by an accident of the allocator (proto_count's IPv6 extension
        // headers: unproven packet reads, 11-14 -> 9 ns a packet without the 512-byte memset).
        FrameCase{"checked_packet_access",
                  "ldxw %r2, [%r1+0]\nldxb %r3, [%r2+13]\nand %r3, 15\nadd %r2, %r3\n"
                  "ldxb %r0, [%r2+20]\nldxb %r1, [%r10-1]\nexit",
                  {{16, 0}}},
        // A stack pointer that differs by path becomes unknown at the join.
        FrameCase{"joined_pointer",
                  "mov %r2, %r10\nadd %r2, -8\njeq %r1, 0, l\nadd %r2, -8\nl:\n"
                  "call 1\nexit",
                  {kWhole}},
        // A callee may read its caller's frame (a pointer argument minus an offset, or its own
        // r10 plus one): with subprograms, whole frames.
        FrameCase{"subprograms",
                  "mov %r1, %r10\nadd %r1, -8\ncall local f\nexit\nf:\nldxdw %r0, [%r1-16]\n"
                  "exit",
                  {kWhole, kWhole}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace knod::jit
