// Disassembler: isa::Instruction printed in the syntax assemble() reads (see asm.h).
#include <fmt/core.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "isa/asm.h"
#include "isa/instruction.h"
#include "isa/mnemonics.h"

namespace knod::isa {
namespace {

std::string r(uint8_t reg) {
  return fmt::format("%r{}", reg);
}

std::string mem(uint8_t base, int16_t off) {
  if (off == 0) return fmt::format("[%r{}]", base);
  return fmt::format("[%r{}{:+d}]", base, off);
}

std::string rel(int32_t off) {
  return fmt::format("{:+d}", off);
}

/// Small values in decimal, bit patterns (and large values) in hex.
std::string imm(int32_t v, bool bits = false) {
  if (!bits && v > -0x10000 && v < 0x10000) return fmt::format("{}", v);
  return fmt::format("{:#x}", static_cast<uint32_t>(v));
}

template <typename Table>
const char* name_of(const Table& table, uint8_t op) {
  for (const auto& e : table)
    if (e.op == op) return e.name.data();
  return nullptr;
}

/// Prints one decoded instruction; "" when it has no text form (printed as .insn instead).
struct Printer {
  const DisasmNames* names;

  std::string operator()(const Alu& a) const {
    std::string m;
    if (a.op == BPF_MOV && a.use_reg && (a.off == 8 || a.off == 16 || (a.off == 32 && a.is64))) {
      return fmt::format("movsx{}{} {}, {}", a.off, a.is64 ? 64 : 32, r(a.dst), r(a.src));
    }
    const char* base = name_of(kAluOps, a.op);
    if (!base) return "";
    m = base;
    if (a.off == 1 && (a.op == BPF_DIV || a.op == BPF_MOD))
      m = "s" + m;
    else if (a.off != 0)
      return "";
    if (!a.is64) m += "32";
    bool bits = a.op == BPF_AND || a.op == BPF_OR || a.op == BPF_XOR;
    return fmt::format("{} {}, {}", m, r(a.dst), a.use_reg ? r(a.src) : imm(a.imm, bits));
  }
  std::string operator()(const Neg& n) const {
    return fmt::format("neg{} {}", n.is64 ? "" : "32", r(n.dst));
  }
  std::string operator()(const Swap& s) const {
    if (s.width != 16 && s.width != 32 && s.width != 64) return "";
    const char* k = s.kind == Swap::kLe ? "le" : s.kind == Swap::kBe ? "be" : "bswap";
    return fmt::format("{}{} {}", k, s.width, r(s.dst));
  }
  std::string operator()(const Load& l) const {
    if (l.sign && l.size == 8) return "";
    return fmt::format("ldx{}{} {}, {}", l.sign ? "s" : "", size_suffix(l.size), r(l.dst),
                       mem(l.base, l.off));
  }
  std::string operator()(const Store& s) const {
    return fmt::format("st{}{} {}, {}", s.use_reg ? "x" : "", size_suffix(s.size),
                       mem(s.base, s.off), s.use_reg ? r(s.src) : imm(s.imm));
  }
  std::string operator()(const Atomic& a) const {
    // Load-acquire / store-release (kernel 6.15+), any size: `base` holds dst_reg.
    if (a.op == kLoadAcquire)
      return fmt::format("ldacq{} {}, {}", size_suffix(a.size), r(a.base), mem(a.src, a.off));
    if (a.op == kStoreRelease)
      return fmt::format("strel{} {}, {}", size_suffix(a.size), mem(a.base, a.off), r(a.src));
    if (a.size != 4 && a.size != 8) return "";
    const char* w = a.size == 4 ? "32" : "";
    if (a.op == BPF_XCHG || a.op == BPF_CMPXCHG)
      return fmt::format("lock {}{} {}, {}", a.op == BPF_XCHG ? "xchg" : "cmpxchg", w,
                         mem(a.base, a.off), r(a.src));
    const char* op = name_of(kAtomicOps, static_cast<uint8_t>(a.op & ~BPF_FETCH));
    if (!op || (a.op & ~0xff) != 0) return "";
    return fmt::format("lock {}{}{} {}, {}", (a.op & BPF_FETCH) ? "fetch " : "", op, w,
                       mem(a.base, a.off), r(a.src));
  }
  std::string operator()(const LoadImm64& l) const {
    if (l.src == 0) return fmt::format("lddw {}, {:#x}", r(l.dst), l.value());
    const char* kind = name_of(kPseudoNames, l.src);
    if (!kind) return "";
    std::string arg = l.src == BPF_PSEUDO_FUNC ? rel(l.imm) : fmt::format("{}", l.imm);
    std::string text = fmt::format("lddw {}, {}({})", r(l.dst), kind, arg);
    if (l.imm2 != 0) text += rel(l.imm2);
    if (names && names->map &&
        (l.src == BPF_PSEUDO_MAP_IDX || l.src == BPF_PSEUDO_MAP_IDX_VALUE ||
         l.src == BPF_PSEUDO_MAP_FD || l.src == BPF_PSEUDO_MAP_VALUE)) {
      std::string n = names->map(l.imm);
      if (!n.empty()) text += " # " + n;
    }
    return text;
  }
  std::string operator()(const Jump& j) const {
    if (j.op == BPF_JA) return fmt::format("ja{} {}", j.is32 ? "32" : "", rel(j.off));
    const char* op = name_of(kJmpOps, j.op);
    if (!op) return "";
    return fmt::format("{}{} {}, {}, {}", op, j.is32 ? "32" : "", r(j.dst),
                       j.use_reg ? r(j.src) : imm(j.imm), rel(j.off));
  }
  std::string operator()(const Call& c) const {
    switch (c.kind) {
      case Call::kReg:
        return fmt::format("call {}", r(c.reg));
      case Call::kLocal:
        return fmt::format("call local {}", rel(c.imm));
      case Call::kKfunc:
        return fmt::format("call runtime {}", c.imm);
      case Call::kHelper:
        break;
    }
    if (names && names->helper) {
      std::string n = names->helper(c.imm);
      if (!n.empty()) return fmt::format("call {}#{}", n, c.imm);
    }
    return fmt::format("call {}", c.imm);
  }
  std::string operator()(const Exit&) const { return "exit"; }
};

/// The text of the instruction at pc and its slot count, or "" when it has no text form
/// that assembles back to the same slots (unknown opcode, nonzero reserved field...).
std::string text_at(const InsnVec& prog, size_t pc, const DisasmNames* names, int* slots) {
  *slots = 1;
  int n = 1;
  auto ins = decode(prog.data(), prog.size(), pc, &n);
  if (!ins) return "";
  std::string text = std::visit(Printer{names}, *ins);
  if (text.empty()) return "";
  try {
    InsnVec back = assemble(text);
    if (back.size() != static_cast<size_t>(n) ||
        std::memcmp(back.data(), &prog[pc], n * sizeof(Insn)) != 0)
      return "";
  } catch (const Error&) {
    return "";
  }
  *slots = n;
  return text;
}

}  // namespace

std::string disassemble_one(const InsnVec& prog, size_t pc, const DisasmNames* names) {
  int slots;
  std::string text = text_at(prog, pc, names, &slots);
  if (text.empty()) return fmt::format(".insn {:#018x}", insn_word(prog.at(pc)));
  return text;
}

std::string disassemble(const InsnVec& prog, const DisasmNames* names) {
  std::string out;
  for (size_t pc = 0; pc < prog.size();) {
    int slots;
    std::string text = text_at(prog, pc, names, &slots);
    if (text.empty()) text = fmt::format(".insn {:#018x}", insn_word(prog[pc]));
    out += text;
    out += '\n';
    pc += slots;
  }
  return out;
}

}  // namespace knod::isa
