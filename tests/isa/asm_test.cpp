// Assembler / disassembler: encodings from RFC 9669 §3-§5, errors, and the round trip
// assemble(disassemble(p)) == p over every bpf_conformance program.
#include "isa/asm.h"

#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "conformance/conformance.h"
#include "isa/number.h"

namespace knod::isa {
namespace {

struct Encoding {
  const char* text;
  uint64_t word;  ///< the slot as the 64-bit word of `-- raw` (opcode in the low byte)
};

// Words written from RFC 9669's field layout: imm(32) | off(16) | src(4) dst(4) | opcode(8).
const Encoding kEncodings[] = {
    {"mov %r0, 1", 0x00000001'0000'00'b7},
    {"mov32 %r1, -1", 0xffffffff'0000'01'b4},
    {"add %r2, %r3", 0x00000000'0000'32'0f},
    {"sdiv %r0, %r1", 0x00000000'0001'10'3f},
    {"smod32 %r0, 3", 0x00000003'0001'00'94},
    {"movsx864 %r6, %r5", 0x00000000'0008'56'bf},
    {"movsx1632 %r4, %r3", 0x00000000'0010'34'bc},
    {"movsx3264 %r0, %r9", 0x00000000'0020'90'bf},
    {"neg %r3", 0x00000000'0000'03'87},
    {"neg32 %r3", 0x00000000'0000'03'84},
    {"le16 %r0", 0x00000010'0000'00'd4},
    {"be32 %r1", 0x00000020'0000'01'dc},
    {"bswap64 %r2", 0x00000040'0000'02'd7},
    {"swap16 %r2", 0x00000010'0000'02'd7},
    {"ldxw %r0, [%r1+4]", 0x00000000'0004'10'61},
    {"ldxdw %r0, [%r10-8]", 0x00000000'fff8'a0'79},
    {"ldxsb %r0, [%r10-1]", 0x00000000'ffff'a0'91},
    {"ldxsh %r0, [%r1]", 0x00000000'0000'10'89},
    {"ldxsw %r0, [%r1+2]", 0x00000000'0002'10'81},
    {"stb [%r10-1], 0x7f", 0x0000007f'ffff'0a'72},
    {"stxdw [%r10-8], %r1", 0x00000000'fff8'1a'7b},
    {"lock add [%r10-8], %r1", 0x00000000'fff8'1a'db},
    {"lock fetch xor32 [%r1+4], %r2", 0x000000a1'0004'21'c3},
    {"lock xchg [%r10-8], %r1", 0x000000e1'fff8'1a'db},
    {"lock cmpxchg32 [%r10-8], %r1", 0x000000f1'fff8'1a'c3},
    // Load-acquire / store-release (kernel 6.15+, include/uapi/linux/bpf.h BPF_LOAD_ACQ 0x100,
    // BPF_STORE_REL 0x110): dst = *(src + off); *(dst + off) = src.
    {"ldacqw %r0, [%r1+4]", 0x00000100'0004'10'c3},
    {"ldacqb %r3, [%r10-1]", 0x00000100'ffff'a3'd3},
    {"streldw [%r1-8], %r2", 0x00000110'fff8'21'db},
    {"strelh [%r1], %r2", 0x00000110'0000'21'cb},
    {"ja +3", 0x00000000'0003'00'05},
    {"ja32 -1", 0xffffffff'0000'00'06},
    {"jeq %r1, 2, +3", 0x00000002'0003'01'15},
    {"jsle32 %r1, %r2, -2", 0x00000000'fffe'21'de},
    {"jset %r1, 0x80000000, +1", 0x80000000'0001'01'45},
    {"call 5", 0x00000005'0000'00'85},
    {"call local +2", 0x00000002'0000'10'85},
    {"call %r2", 0x00000000'0000'02'8d},
    {"exit", 0x00000000'0000'00'95},
};

TEST(Assembler, EncodesPerRfc) {
  for (const auto& e : kEncodings) {
    InsnVec p = assemble(e.text);
    ASSERT_EQ(p.size(), 1u) << e.text;
    EXPECT_EQ(insn_word(p[0]), e.word) << e.text;
  }
}

// The disassembler writes what the assembler reads, for these too (they were `.insn` words).
TEST(Disassembler, LoadAcquireAndStoreReleaseRoundTrip) {
  for (const char* text : {"ldacqw %r0, [%r1+4]", "ldacqb %r3, [%r10-1]", "streldw [%r1-8], %r2",
                           "strelh [%r1], %r2"}) {
    InsnVec p = assemble(text);
    EXPECT_EQ(disassemble(p), std::string(text) + "\n");
  }
  EXPECT_THROW(assemble("ldacqq %r0, [%r1]"), Error);
  EXPECT_THROW(assemble("strelw %r1, [%r2]"), Error);
}

TEST(Assembler, Lddw) {
  InsnVec p = assemble("lddw %r0, 0x1122334455667788\nlddw %r1, -1\nexit");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(insn_word(p[0]), 0x55667788'0000'00'18u);
  EXPECT_EQ(insn_word(p[1]), 0x11223344'0000'00'00u);
  EXPECT_EQ(insn_word(p[2]), 0xffffffff'0000'01'18u);
  EXPECT_EQ(insn_word(p[3]), 0xffffffff'0000'00'00u);
  InsnVec m = assemble("lddw %r1, map_idx_value(2)+8");
  EXPECT_EQ(m[0].src_reg, BPF_PSEUDO_MAP_IDX_VALUE);
  EXPECT_EQ(m[0].imm, 2);
  EXPECT_EQ(m[1].imm, 8);
}

TEST(Assembler, LabelsAndImplicitExit) {
  InsnVec p = assemble("jeq %r1, 0, done\nmov %r0, 1\ndone:\nja exit\nexit\n");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].off, 1);  // to `ja` at 2
  EXPECT_EQ(p[2].off, 0);  // `exit` label = the first exit, slot 3
  InsnVec c = assemble("call local f\nexit\nf:\nmov %r0, 2\nexit");
  EXPECT_EQ(c[0].imm, 1);
  EXPECT_EQ(c[0].src_reg, BPF_PSEUDO_CALL);
  InsnVec back = assemble("l:\nmov %r0, 0\nja32 l\nexit");
  EXPECT_EQ(back[1].imm, -2);
}

TEST(Assembler, RejectsBadInput) {
  const char* bad[] = {
      "ldxq %r0, %r1",           // unknown mnemonic
      "or %r0, %r50",            // bad register
      "mov %r11, 1",             // r11 does not exist
      "mov32 %r0, 2147483648",   // imm out of signed 32-bit range (decimal)
      "mov32 %r0, 0x100000000",  // imm out of 32-bit range (hex)
      "mov %r0, -2147483649",
      "ldxb %r0, %r1",            // memory operand without brackets
      "ldxb %r0, [%r1+0x10000]",  // offset out of 16-bit range
      "ldxb %r0, [%r1+32768]",
      "lddw %r0",  // operand count
      "add %r0, 1, 2",
      "exit %r0",
      "ja NOT_A_LABEL\nexit",  // undefined label
      "a:\na:\nexit",          // duplicate label
      "jeq %r0, 1, 5",         // target neither label nor +N
      "lock or [%r10-8]",      // lock operand count
      "lock",
      "lock fetch xchg [%r10-8], %r1",
      "call foo bar",       // bad call mode
      "ldxsdw %r0, [%r1]",  // no sign-extending 64-bit load
      "movsx3232 %r0, %r1",
      "le8 %r0",
  };
  for (const char* text : bad) EXPECT_THROW(assemble(text), Error) << text;
}

TEST(Assembler, ErrorNamesLine) {
  try {
    assemble("mov %r0, 1\n\n# comment\nbogus %r0\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 4"), std::string::npos) << e.what();
  }
}

TEST(Numbers, Ranges) {
  EXPECT_EQ(parse_imm32("0xffffffff"), -1);
  EXPECT_EQ(parse_imm32("-2147483648"), INT32_MIN);
  EXPECT_EQ(parse_imm32("2147483647"), INT32_MAX);
  EXPECT_FALSE(parse_imm32("4294967295"));
  EXPECT_FALSE(parse_imm32("12z"));
  EXPECT_EQ(parse_off16("0xffff"), -1);
  EXPECT_EQ(parse_off16("-32768"), INT16_MIN);
  EXPECT_FALSE(parse_off16("-32769"));
  EXPECT_EQ(parse_imm64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_imm64("-9223372036854775808"), 0x8000000000000000u);
  EXPECT_FALSE(parse_imm64("0x10000000000000000"));
}

TEST(Disassembler, CanonicalText) {
  InsnVec p = assemble(
      "mov %r0, -1\nand32 %r1, 0xff00\nldxdw %r2, [%r10-8]\nlock fetch add [%r1+4], %r2\n"
      "jne32 %r1, %r2, -3\ncall 1\nexit");
  EXPECT_EQ(disassemble(p),
            "mov %r0, -1\nand32 %r1, 0xff00\nldxdw %r2, [%r10-8]\n"
            "lock fetch add [%r1+4], %r2\njne32 %r1, %r2, -3\ncall 1\nexit\n");
  DisasmNames names;
  names.helper = [](int32_t id) { return id == 1 ? std::string("bpf_map_lookup_elem") : ""; };
  names.map = [](int32_t idx) { return idx == 0 ? std::string("counters") : ""; };
  InsnVec q = assemble("lddw %r1, map_idx(0)\ncall 1\nexit");
  std::string text = disassemble(q, &names);
  EXPECT_EQ(text, "lddw %r1, map_idx(0) # counters\ncall bpf_map_lookup_elem#1\nexit\n");
  EXPECT_EQ(assemble(text).size(), q.size());
  EXPECT_EQ(std::memcmp(assemble(text).data(), q.data(), q.size() * sizeof(Insn)), 0);
}

TEST(Disassembler, NonCanonicalSlotsAsRawWords) {
  // add64 imm with a nonzero offset (negative/unused-add64_imm-offset.data)
  InsnVec p = parse_raw("07 00 01 00 01 00 00 00\n95 00 00 00 00 00 00 00\n");
  EXPECT_EQ(disassemble(p), ".insn 0x0000000100010007\nexit\n");
  InsnVec back = assemble(disassemble(p));
  EXPECT_EQ(std::memcmp(back.data(), p.data(), 16), 0);
  // lddw without its second slot
  InsnVec q = parse_raw("0x0000000100000018");
  EXPECT_EQ(disassemble(q), ".insn 0x0000000100000018\n");
}

TEST(Raw, WordsAndBytesAgree) {
  InsnVec a = parse_raw("0x5566778800000018\n# comment\n0x1122334400000000\n");
  InsnVec b = parse_raw("18 00 00 00 88 77 66 55\n00 00 00 00 44 33 22 11\n");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 16), 0);
  EXPECT_EQ(a[0].imm, 0x55667788);
  EXPECT_THROW(parse_raw("18 00 00"), Error);
  EXPECT_THROW(parse_raw("0xzz"), Error);
}

const std::string kDir = std::string(KNOD_SHARED_DIR) + "/conformance";

// Every conformance program survives assemble -> disassemble -> assemble unchanged, and where
// a file carries both `-- asm` and `-- raw` they encode the same slots.
TEST(RoundTrip, EveryConformanceProgram) {
  auto files = conformance::data_files(kDir + "/tests");
  ASSERT_GE(files.size(), 313u);
  int checked = 0, raw_checked = 0;
  for (const auto& f : files) {
    auto c = conformance::parse_data_file(f);
    InsnVec p = conformance::case_program(c);
    std::string text = disassemble(p);
    InsnVec back = assemble(text);
    ASSERT_EQ(back.size(), p.size()) << f;
    EXPECT_EQ(std::memcmp(back.data(), p.data(), p.size() * sizeof(Insn)), 0) << f << "\n" << text;
    EXPECT_EQ(text.find(".insn"), std::string::npos) << f << "\n" << text;
    ++checked;
    if (c.asm_text && c.raw_text) {
      InsnVec raw = parse_raw(*c.raw_text);
      ASSERT_EQ(raw.size(), p.size()) << f;
      EXPECT_EQ(std::memcmp(raw.data(), p.data(), p.size() * sizeof(Insn)), 0) << f;
      ++raw_checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()));
  EXPECT_GE(raw_checked, 1);
}

}  // namespace
}  // namespace knod::isa
