// Structural verifier: accepts what the kernel accepts, rejects (with the slot named) what
// kernel/bpf/verifier.c rejects for its shape.
#include "verifier/verifier.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "isa/asm.h"

namespace knod::verifier {
namespace {

std::string reject_reason(const InsnVec& p) {
  try {
    check_structure(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Verifier, AcceptsWellFormed) {
  const char* good[] = {
      "mov %r0, 0\nexit",
      "lddw %r0, 0x1122334455667788\nexit",
      "mov %r0, 0\njeq %r1, 0, +1\nmov %r0, 1\nexit",
      "call local f\nexit\nf:\nmov %r0, 1\nexit",
      "mov %r0, 0\nlsh32 %r0, 40\nexit",  // shift count masked at run time (conformance)
      "mov %r0, 0\nja32 +0\nexit",
      "l:\nmov %r0, 0\nja l",  // last insn may be ja (budget stops it)
      "lock cmpxchg [%r10-8], %r1\nexit",
      "call %r2\nexit",                                // callx
      "stdw [%r10-512], 1\nldxb %r0, [%r10-1]\nexit",  // the frame's first and last bytes
      // 288 + 224 = 512 bytes over two frames: the kernel's limit exactly
      "stdw [%r10-288], 0\ncall local f\nexit\nf:\nstdw [%r10-224], 0\nexit",
  };
  for (const char* t : good) EXPECT_EQ(reject_reason(isa::assemble(t)), "") << t;
}

struct Bad {
  const char* what;
  InsnVec prog;
  const char* reason;  ///< expected part of the message
};

TEST(Verifier, RejectsPerKernelRules) {
  auto raw = [](const char* t) { return isa::parse_raw(t); };
  const Bad bad[] = {
      {"empty", {}, "empty program"},
      {"add64 imm nonzero off", raw("07 00 01 00 01 00 00 00\n95 00 00 00 00 00 00 00"),
       "insn 0: BPF_ALU uses reserved fields"},
      {"add64 imm nonzero src", raw("07 10 00 00 01 00 00 00\n95 00 00 00 00 00 00 00"), "insn 0:"},
      {"add reg nonzero imm", raw("0c 00 00 00 01 00 00 00\n95 00 00 00 00 00 00 00"), "insn 0:"},
      {"unknown opcode", raw("0x00000000000000e7\n0x0000000000000095"), "insn 0: unknown"},
      {"exit with imm", raw("95 00 00 00 01 00 00 00\n95 00 00 00 00 00 00 00"),
       "insn 0: BPF_EXIT uses reserved fields"},
      {"ja with src", raw("05 10 00 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_JA"},
      {"call with dst", raw("85 01 00 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_CALL"},
      {"stw with src", raw("62 1a fc ff 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_ST"},
      {"write to r10", isa::assemble("mov %r10, 0\nexit"), "insn 0: frame pointer"},
      {"ldx into r10", isa::assemble("ldxdw %r10, [%r1]\nexit"), "frame pointer"},
      {"div by imm 0", isa::assemble("div %r0, 0\nexit"), "div by zero"},
      {"be with width 8", raw("dc 00 00 00 08 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_END"},
      {"bswap with BPF_X", raw("df 00 00 00 10 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_END"},
      {"movsx32 off 32", raw("bc 10 20 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_MOV"},
      {"ldxsdw", raw("99 10 00 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_LDX"},
      {"atomic on a byte", raw("d3 1a f8 ff 00 00 00 00\n95 00 00 00 00 00 00 00"), "atomic"},
      {"atomic bad op", raw("db 1a f8 ff 10 00 00 00\n95 00 00 00 00 00 00 00"), "atomic"},
      {"lddw missing 2nd slot", raw("0x0000000100000018"), "insn 0: invalid bpf_ld_imm64"},
      {"lddw bad 2nd slot", raw("0x0000000100000018\n0x0000000000000095\n0x0000000000000095"),
       "insn 0: invalid bpf_ld_imm64"},
      {"legacy ld_abs", raw("20 00 00 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "BPF_LD"},
      {"jump past the end", isa::assemble("ja +1\nexit"), "insn 0: jump out of range"},
      {"jump before start", isa::assemble("ja -2\nexit"), "jump out of range"},
      {"jump into lddw", isa::assemble("ja +1\nlddw %r0, 1\nexit"), "middle of ld_imm64"},
      {"falls off the end", isa::assemble("mov %r0, 0"), "insn 0: last insn is not an exit"},
      {"subprog falls into next", isa::assemble("call local f\nexit\nf:\nmov %r0, 1"), "last insn"},
      {"jump out of subprog", isa::assemble("call local f\nja +2\nexit\nf:\nmov %r0, 0\nexit"),
       "jump out of range"},
      {"call target outside", isa::assemble("call local +5\nexit"), "jump out of range"},
      {"dead code", isa::assemble("mov %r0, 0\nexit\nmov %r0, 1\nexit"),
       "insn 2: unreachable insn"},
      {"dead subprogram tail", isa::assemble("call local f\nexit\nf:\nexit\nexit"),
       "insn 3: unreachable"},
      {"recursion", isa::assemble("call local f\nexit\nf:\ncall local f\nexit"), "recursive"},
      {"kfunc", isa::assemble("call runtime 7\nexit"), "kernel function"},
      {"stack write below the frame", isa::assemble("stdw [%r10-520], 1\nexit"),
       "insn 0: invalid write to stack R10 off=-520 size=8"},
      {"stack read above r10", isa::assemble("ldxw %r0, [%r10-2]\nexit"),
       "invalid read from stack R10 off=-2 size=4"},
      {"atomic past r10", isa::assemble("lock add [%r10+0], %r1\nexit"),
       "invalid write to stack R10 off=0 size=8"},
      {"combined stack of two frames",
       isa::assemble("stdw [%r10-304], 0\ncall local f\nexit\nf:\nstdw [%r10-224], 0\nexit"),
       "combined stack size of 2 calls is 528. Too large"},
      {"jmp32 exit", raw("96 00 00 00 00 00 00 00\n95 00 00 00 00 00 00 00"), "JMP32"},
  };
  for (const auto& b : bad) {
    std::string why = reject_reason(b.prog);
    EXPECT_NE(why.find(b.reason), std::string::npos) << b.what << ": got '" << why << "'";
  }
}

/// A chain main -> f1 -> ... -> f(n-1): n frames.
InsnVec call_chain(int frames) {
  std::string text;
  for (int k = 0; k < frames; ++k) {
    text += "f" + std::to_string(k) + ":\n";
    if (k + 1 < frames) text += "call local f" + std::to_string(k + 1) + "\n";
    text += "exit\n";
  }
  return isa::assemble(text);
}

TEST(Verifier, CallDepthLimitIsEightFrames) {
  EXPECT_EQ(reject_reason(call_chain(kMaxCallDepth)), "");
  EXPECT_NE(reject_reason(call_chain(kMaxCallDepth + 1)).find("too deep"), std::string::npos);
}

}  // namespace
}  // namespace knod::verifier
