// Per-opcode interpreter results, each derived by hand from RFC 9669 §4-§5 (and the kernel's
// interpreter where the RFC leaves a case to the implementation: division by zero etc.).
#include "vm_test_util.h"

namespace knod::vm::test {
namespace {

struct Case {
  const char* text;  ///< program body; "exit" is appended
  uint64_t r0;
};

void check(const Case* cases, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    Result r = run_asm(std::string(cases[k].text) + "\nexit");
    EXPECT_EQ(r.fault, Fault::kNone) << cases[k].text;
    EXPECT_EQ(r.r0, cases[k].r0) << cases[k].text;
  }
}

const Case kArith[] = {
    {"mov %r0, -1", 0xffffffffffffffff},                // imm sign-extended
    {"mov32 %r0, -1", 0xffffffff},                      // ALU32 zero-extends
    {"lddw %r0, 0xffffffffffffffff\nadd32 %r0, 1", 0},  // wraps in 32 bits
    {"lddw %r0, 0x100000002\nmul32 %r0, 3", 6},
    {"mov %r0, 3\nsub %r0, 5", 0xfffffffffffffffe},
    {"mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1", 0},  // div by 0 -> 0
    {"lddw %r0, 0xffffffff00000007\nmov %r1, 0\ndiv32 %r0, %r1", 0},
    {"mov %r0, 7\nmov %r1, 0\nmod %r0, %r1", 7},  // mod by 0 -> dst
    {"lddw %r0, 0xffffffff00000007\nmov %r1, 0\nmod %r0, %r1", 0xffffffff00000007},
    {"lddw %r0, 0xffffffff00000007\nmov %r1, 0\nmod32 %r0, %r1", 7},  // ... zero-extended
    {"mov %r0, -1\ndiv %r0, 2", 0x7fffffffffffffff},                  // unsigned
    {"mov %r0, -7\nsdiv %r0, 2", 0xfffffffffffffffd},                 // -3, truncated
    {"mov %r0, -7\nsmod %r0, 2", 0xffffffffffffffff},                 // -1: sign of dividend
    {"mov %r0, 7\nsmod %r0, -2", 1},
    {"lddw %r0, 0x8000000000000000\nmov %r1, -1\nsdiv %r0, %r1", 0x8000000000000000},
    {"lddw %r0, 0x8000000000000000\nmov %r1, -1\nsmod %r0, %r1", 0},
    {"mov %r0, -5\nmov %r1, 0\nsdiv %r0, %r1", 0},
    {"mov %r0, -5\nmov %r1, 0\nsmod %r0, %r1", 0xfffffffffffffffb},
    {"mov32 %r0, -7\nsdiv32 %r0, 2", 0xfffffffd},
    {"mov32 %r0, 0x80000000\nmov32 %r1, -1\nsdiv32 %r0, %r1", 0x80000000},
    {"mov32 %r0, 0x80000000\nmov32 %r1, -1\nsmod32 %r0, %r1", 0},
    {"lddw %r0, 0xffffffff80000005\nmov %r1, 0\nsmod32 %r0, %r1", 0x80000005},
    {"mov %r0, 5\nneg %r0", 0xfffffffffffffffb},
    {"mov %r0, 5\nneg32 %r0", 0xfffffffb},
    {"mov %r0, 0xf0\nor %r0, 0x0f\nand %r0, 0x3c\nxor %r0, 0xff", 0xc3},
};

const Case kShifts[] = {
    {"mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1", 2},    // count & 63
    {"mov %r0, 1\nmov %r1, 33\nlsh32 %r0, %r1", 2},  // count & 31
    {"mov %r0, 1\nlsh %r0, 63", 0x8000000000000000},
    {"mov %r0, 1\nlsh32 %r0, 32", 1},  // imm 32 masks to 0
    {"mov %r0, -1\nrsh %r0, 60", 0xf},
    {"mov %r0, -16\nrsh32 %r0, 2", 0x3ffffffc},
    {"mov %r0, -16\narsh %r0, 2", 0xfffffffffffffffc},
    {"mov32 %r0, -16\narsh32 %r0, 2", 0xfffffffc},
    {"lddw %r0, 0x8000000000000000\narsh %r0, 124", 0xfffffffffffffff8},  // 124 & 63 = 60
};

const Case kMovsxAndSwaps[] = {
    {"mov %r1, 0x80\nmovsx864 %r0, %r1", 0xffffffffffffff80},
    {"mov %r1, 0x80\nmovsx832 %r0, %r1", 0xffffff80},
    {"mov %r1, 0x7fff\nmovsx1664 %r0, %r1", 0x7fff},
    {"mov %r1, 0x8000\nmovsx1632 %r0, %r1", 0xffff8000},
    {"lddw %r1, 0x180000000\nmovsx3264 %r0, %r1", 0xffffffff80000000},
    {"lddw %r0, 0x1122334455667788\nle16 %r0", 0x7788},
    {"lddw %r0, 0x1122334455667788\nle32 %r0", 0x55667788},
    {"lddw %r0, 0x1122334455667788\nle64 %r0", 0x1122334455667788},
    {"lddw %r0, 0x1122334455667788\nbe16 %r0", 0x8877},
    {"lddw %r0, 0x1122334455667788\nbe32 %r0", 0x88776655},
    {"lddw %r0, 0x1122334455667788\nbe64 %r0", 0x8877665544332211},
    {"lddw %r0, 0x1122334455667788\nbswap16 %r0", 0x8877},
    {"lddw %r0, 0x1122334455667788\nbswap32 %r0", 0x88776655},
    {"lddw %r0, 0x1122334455667788\nbswap64 %r0", 0x8877665544332211},
};

const Case kJumps[] = {
    {"lddw %r1, 0x100000001\nmov %r0, 0\njeq32 %r1, 1, +1\nja +1\nmov %r0, 1", 1},
    {"lddw %r1, 0x100000001\nmov %r0, 0\njeq %r1, 1, +1\nja +1\nmov %r0, 1", 0},
    {"mov %r1, -1\nmov %r0, 0\njsgt %r1, 0, +1\nmov %r0, 1", 1},  // -1 > 0 signed: no
    {"mov %r1, -1\nmov %r0, 0\njgt %r1, 0, +1\nmov %r0, 1", 0},   // unsigned: yes
    {"mov %r1, -1\nmov %r0, 0\njslt32 %r1, 0, +1\nmov %r0, 1", 0},
    {"mov %r1, 6\nmov %r0, 0\njset %r1, 4, +1\nmov %r0, 1", 0},
    {"mov %r1, 6\nmov %r0, 0\njset %r1, 1, +1\nmov %r0, 1", 1},
    {"mov %r1, 5\nmov %r2, 5\nmov %r0, 0\njle %r1, %r2, +1\nmov %r0, 1", 0},
    {"mov %r1, 5\nmov %r2, 5\nmov %r0, 0\njlt %r1, %r2, +1\nmov %r0, 1", 1},
    {"mov %r0, 3\njeq %r1, 5, +1\nja32 +1\nmov %r0, 4", 3},  // r1 = 0: ja32 taken
};

const Case kMemory[] = {
    {"mov %r1, 0xff\nstxb [%r10-1], %r1\nldxsb %r0, [%r10-1]", 0xffffffffffffffff},
    {"mov %r1, 0xff\nstxb [%r10-1], %r1\nldxb %r0, [%r10-1]", 0xff},
    {"sth [%r10-2], 0x8000\nldxsh %r0, [%r10-2]", 0xffffffffffff8000},
    {"stw [%r10-4], 0x80000000\nldxsw %r0, [%r10-4]", 0xffffffff80000000},
    {"stw [%r10-4], 0x80000000\nldxw %r0, [%r10-4]", 0x80000000},
    {"stdw [%r10-8], -2\nldxdw %r0, [%r10-8]", 0xfffffffffffffffe},  // imm sign-extended
    {"ldxdw %r0, [%r10-512]", 0},                                    // stack starts zeroed
    {"mov %r1, 3\nstxdw [%r10-8], %r1\nmov %r2, 4\nlock fetch add [%r10-8], %r2\n"
     "ldxdw %r0, [%r10-8]\nlsh %r0, 8\nor %r0, %r2",
     0x703},
    {"lddw %r1, 0xffffffff\nstxdw [%r10-8], %r1\nmov %r2, 1\nlock fetch add32 [%r10-8], %r2\n"
     "ldxdw %r0, [%r10-8]\nlsh %r0, 32\nor %r0, %r2",
     0xffffffff},  // low word wraps to 0
    {"mov %r1, 5\nstxdw [%r10-8], %r1\nmov %r2, 9\nlock xchg [%r10-8], %r2\n"
     "ldxdw %r0, [%r10-8]\nlsh %r0, 8\nor %r0, %r2",
     0x905},
    {"mov %r1, 12\nstxdw [%r10-8], %r1\nmov %r2, 10\nlock and [%r10-8], %r2\nmov %r2, 1\n"
     "lock or [%r10-8], %r2\nmov %r2, 15\nlock xor [%r10-8], %r2\nldxdw %r0, [%r10-8]",
     6},
    {"mov %r1, 5\nstxdw [%r10-8], %r1\nmov %r0, 5\nmov %r2, 8\nlock cmpxchg [%r10-8], %r2\n"
     "ldxdw %r1, [%r10-8]\nlsh %r1, 8\nor %r0, %r1",
     0x805},  // equal: swapped
    {"mov %r1, 5\nstxdw [%r10-8], %r1\nmov %r0, 6\nmov %r2, 8\nlock cmpxchg [%r10-8], %r2\n"
     "ldxdw %r1, [%r10-8]\nlsh %r1, 8\nor %r0, %r1",
     0x505},  // not equal: r0 = old
    {"lddw %r1, 0x1111111122222222\nstxdw [%r10-8], %r1\nlddw %r0, 0x9999999922222222\n"
     "mov %r2, 7\nlock cmpxchg32 [%r10-8], %r2",
     0x22222222},  // 32-bit compare, zext
};

TEST(InterpAlu, Arithmetic) {
  check(kArith, std::size(kArith));
}
TEST(InterpAlu, Shifts) {
  check(kShifts, std::size(kShifts));
}
TEST(InterpAlu, MovsxAndByteSwaps) {
  check(kMovsxAndSwaps, std::size(kMovsxAndSwaps));
}
TEST(InterpJmp, Conditions) {
  check(kJumps, std::size(kJumps));
}
TEST(InterpMem, LoadsStoresAtomics) {
  check(kMemory, std::size(kMemory));
}

}  // namespace
}  // namespace knod::vm::test
