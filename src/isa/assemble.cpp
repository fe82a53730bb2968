// Assembler for the bpf_conformance text syntax (see asm.h). Parsing only: each line becomes
// an isa::Instruction, encode() makes the slots, labels are resolved at the end.
#include <fmt/core.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "isa/asm.h"
#include "isa/instruction.h"
#include "isa/mnemonics.h"
#include "isa/number.h"

namespace knod::isa {
namespace {

struct Fixup {
  size_t slot;
  std::string label;
  bool imm32;  ///< target goes to imm (ja32, call local, func) instead of off
  int line;
};

/// Splits a line into words: whitespace and commas separate, `#` at the start of a word
/// starts a comment, spaces inside [...] are dropped.
std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  int depth = 0;
  for (char c : line) {
    if (c == '[') depth++;
    if (c == ']') depth--;
    if (depth > 0 && (c == ' ' || c == '\t')) continue;
    if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (c == '#' && cur.empty()) break;
    cur += c;
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

bool valid_label(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return true;
}

class Assembler {
 public:
  InsnVec run(std::string_view text) {
    int line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      line_no++;
      line_ = line_no;
      line(text.substr(pos, end - pos));
      pos = end + 1;
    }
    resolve();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(fmt::format("line {}: {}", line_, msg));
  }

  void line(std::string_view text) {
    auto w = split_words(text);
    if (w.empty()) return;
    if (w[0].size() > 1 && w[0].back() == ':') {
      std::string label = w[0].substr(0, w[0].size() - 1);
      if (!valid_label(label)) fail("bad label name '" + label + "'");
      if (labels_.count(label)) fail("duplicate label '" + label + "'");
      labels_[label] = out_.size();
      w.erase(w.begin());
      if (w.empty()) return;
    }
    std::string m = w[0];
    std::vector<std::string> ops(w.begin() + 1, w.end());
    instruction(m, ops);
  }

  void need(const std::string& m, const std::vector<std::string>& ops, size_t n) const {
    if (ops.size() != n)
      fail(fmt::format("invalid number of operands for {}: {} (expected {})", m, ops.size(), n));
  }

  uint8_t reg(const std::string& s) const {
    static const char* names[] = {"%r0", "%r1", "%r2", "%r3", "%r4", "%r5",
                                  "%r6", "%r7", "%r8", "%r9", "%r10"};
    for (uint8_t r = 0; r < kNumRegs; ++r)
      if (s == names[r]) return r;
    fail("invalid register '" + s + "'");
  }

  int32_t imm32(const std::string& s) const {
    auto v = parse_imm32(s);
    if (!v) fail("invalid or out of 32-bit range immediate '" + s + "'");
    return *v;
  }
  int16_t off16(const std::string& s) const {
    auto v = parse_off16(s);
    if (!v) fail("invalid or out of 16-bit range offset '" + s + "'");
    return *v;
  }

  /// `[%rN]`, `[%rN+off]`, `[%rN-off]`.
  std::pair<uint8_t, int16_t> mem(const std::string& s) const {
    if (s.size() < 3 || s.front() != '[' || s.back() != ']')
      fail("invalid memory operand '" + s + "' (expected [%rN+off])");
    std::string in = s.substr(1, s.size() - 2);
    size_t k = in.find_first_of("+-");
    if (k == std::string::npos) return {reg(in), 0};
    return {reg(in.substr(0, k)), off16(in.substr(k))};
  }

  /// A jump target: `+N`/`-N` or a label (resolved later).
  int32_t target(const std::string& s, bool imm32_field) {
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) return imm32_field ? imm32(s) : off16(s);
    if (!valid_label(s)) fail("invalid jump target '" + s + "'");
    fixups_.push_back({out_.size(), s, imm32_field, line_});
    return 0;
  }

  void emit(const Instruction& ins) {
    Insn slots[2];
    int n = encode(ins, slots);
    for (int i = 0; i < n; ++i) out_.push_back(slots[i]);
  }

  static bool strip_suffix(std::string& s, std::string_view suffix) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) {
      s.resize(s.size() - suffix.size());
      return true;
    }
    return false;
  }

  void instruction(const std::string& m, const std::vector<std::string>& ops) {
    if (m == "exit") {
      need(m, ops, 0);
      if (!first_exit_) first_exit_ = out_.size();
      return emit(Exit{});
    }
    if (m == "lock") return lock(ops);
    if (m == "call") return call(ops);
    if (m == ".insn") {
      need(m, ops, 1);
      auto v = parse_imm64(ops[0]);
      if (!v) fail("invalid .insn word '" + ops[0] + "'");
      out_.push_back(insn_from_word(*v));
      return;
    }
    if (m == "lddw") {
      need(m, ops, 2);
      return lddw(ops);
    }
    if (m == "ja" || m == "ja32") {
      need(m, ops, 1);
      Jump j{BPF_JA, m == "ja32"};
      j.off = target(ops[0], j.is32);
      return emit(j);
    }
    if (m == "neg" || m == "neg32") {
      need(m, ops, 1);
      return emit(Neg{m == "neg", reg(ops[0])});
    }
    if (auto s = swap(m)) {
      need(m, ops, 1);
      s->dst = reg(ops[0]);
      return emit(*s);
    }
    if (m.starts_with("ldacq") || m.starts_with("strel")) return acquire_release(m, ops);
    if (m.starts_with("ldx")) return load(m, ops);
    if (m.starts_with("stx")) return store(m, ops, true);
    if (m.starts_with("st")) return store(m, ops, false);
    if (m.starts_with("movsx")) return movsx(m, ops);
    std::string base = m;
    bool is32 = strip_suffix(base, "32");
    for (const auto& j : kJmpOps)
      if (base == j.name) {
        need(m, ops, 3);
        Jump jmp{j.op, is32, reg(ops[0])};
        operand(ops[1], jmp.use_reg, jmp.src, jmp.imm);
        jmp.off = target(ops[2], false);
        return emit(jmp);
      }
    int16_t off = 0;
    if (base == "sdiv" || base == "smod") {
      base = base.substr(1);
      off = 1;
    }
    for (const auto& a : kAluOps)
      if (base == a.name) {
        need(m, ops, 2);
        Alu alu{a.op, !is32, reg(ops[0])};
        alu.off = off;
        operand(ops[1], alu.use_reg, alu.src, alu.imm);
        return emit(alu);
      }
    fail("invalid mnemonic '" + m + "'");
  }

  void operand(const std::string& s, bool& use_reg, uint8_t& src, int32_t& imm) const {
    if (!s.empty() && s[0] == '%') {
      use_reg = true;
      src = reg(s);
    } else {
      imm = imm32(s);
    }
  }

  std::optional<Swap> swap(const std::string& m) const {
    struct {
      std::string_view prefix;
      Swap::Kind kind;
    } kinds[] = {
        {"le", Swap::kLe}, {"be", Swap::kBe}, {"bswap", Swap::kBswap}, {"swap", Swap::kBswap}};
    for (auto& k : kinds)
      for (int width : {16, 32, 64})
        if (m == fmt::format("{}{}", k.prefix, width)) return Swap{k.kind, 0, width};
    return std::nullopt;
  }

  static std::optional<uint8_t> size_of(std::string_view s) {
    if (s == "b") return 1;
    if (s == "h") return 2;
    if (s == "w") return 4;
    if (s == "dw") return 8;
    return std::nullopt;
  }

  void load(const std::string& m, const std::vector<std::string>& ops) {
    std::string_view rest = std::string_view(m).substr(3);
    bool sign = false;
    if (rest.size() > 1 && rest[0] == 's') {
      sign = true;
      rest = rest.substr(1);
    }
    auto size = size_of(rest);
    if (!size || (sign && *size == 8)) fail("invalid mnemonic '" + m + "'");
    need(m, ops, 2);
    Load l{*size, sign, reg(ops[0])};
    std::tie(l.base, l.off) = mem(ops[1]);
    emit(l);
  }

  /// `ldacq{b,h,w,dw} %rD, [%rS+off]` (BPF_LOAD_ACQ) and `strel{b,h,w,dw} [%rD+off], %rS`
  /// (BPF_STORE_REL): BPF_STX | BPF_ATOMIC with imm 0x100 / 0x110.
  void acquire_release(const std::string& m, const std::vector<std::string>& ops) {
    const bool load = m.starts_with("ldacq");
    auto size = size_of(std::string_view(m).substr(5));
    if (!size) fail("invalid mnemonic '" + m + "'");
    need(m, ops, 2);
    Atomic a{*size};
    a.op = load ? kLoadAcquire : kStoreRelease;
    if (load) {
      a.base = reg(ops[0]);  // dst_reg: the register loaded
      std::tie(a.src, a.off) = mem(ops[1]);
    } else {
      std::tie(a.base, a.off) = mem(ops[0]);
      a.src = reg(ops[1]);
    }
    emit(a);
  }

  void store(const std::string& m, const std::vector<std::string>& ops, bool use_reg) {
    auto size = size_of(std::string_view(m).substr(use_reg ? 3 : 2));
    if (!size) fail("invalid mnemonic '" + m + "'");
    need(m, ops, 2);
    Store s{*size};
    std::tie(s.base, s.off) = mem(ops[0]);
    s.use_reg = use_reg;
    if (use_reg)
      s.src = reg(ops[1]);
    else
      s.imm = imm32(ops[1]);
    emit(s);
  }

  void movsx(const std::string& m, const std::vector<std::string>& ops) {
    static const struct {
      std::string_view name;
      int16_t off;
      bool is64;
    } forms[] = {{"movsx832", 8, false},
                 {"movsx864", 8, true},
                 {"movsx1632", 16, false},
                 {"movsx1664", 16, true},
                 {"movsx3264", 32, true}};
    for (const auto& f : forms)
      if (m == f.name) {
        need(m, ops, 2);
        Alu a{BPF_MOV, f.is64, reg(ops[0]), true, reg(ops[1]), 0, f.off};
        return emit(a);
      }
    fail("invalid mnemonic '" + m + "'");
  }

  void lddw(const std::vector<std::string>& ops) {
    LoadImm64 l{reg(ops[0])};
    const std::string& v = ops[1];
    size_t paren = v.find('(');
    if (paren == std::string::npos) {
      auto x = parse_imm64(v);
      if (!x) fail("invalid 64-bit immediate '" + v + "'");
      l.imm = static_cast<int32_t>(static_cast<uint32_t>(*x));
      l.imm2 = static_cast<int32_t>(static_cast<uint32_t>(*x >> 32));
      return emit(l);
    }
    std::string kind = v.substr(0, paren);
    size_t close = v.find(')', paren);
    if (close == std::string::npos) fail("invalid ld_imm64 operand '" + v + "'");
    bool found = false;
    for (const auto& p : kPseudoNames)
      if (kind == p.name) {
        l.src = p.op;
        found = true;
      }
    if (!found) fail("invalid ld_imm64 kind '" + kind + "'");
    std::string arg = v.substr(paren + 1, close - paren - 1);
    if (l.src == BPF_PSEUDO_FUNC)
      l.imm = target(arg, true);
    else
      l.imm = imm32(arg);
    std::string rest = v.substr(close + 1);
    if (!rest.empty()) l.imm2 = imm32(rest);
    emit(l);
  }

  void call(const std::vector<std::string>& ops) {
    Call c;
    if (ops.size() == 1) {
      const std::string& t = ops[0];
      if (!t.empty() && t[0] == '%') {
        c.kind = Call::kReg;
        c.reg = reg(t);
      } else if (size_t hash = t.find('#'); hash != std::string::npos) {
        c.imm = imm32(t.substr(hash + 1));  // `name#id` as the disassembler prints it
      } else {
        c.imm = imm32(t);
      }
    } else if (ops.size() == 2) {
      if (ops[0] == "helper") {
        c.imm = imm32(ops[1]);
      } else if (ops[0] == "local") {
        c.kind = Call::kLocal;
        c.imm = target(ops[1], true);
      } else if (ops[0] == "runtime") {
        c.kind = Call::kKfunc;
        c.imm = imm32(ops[1]);
      } else {
        fail("invalid call mode '" + ops[0] + "' (helper, local, runtime)");
      }
    } else {
      fail(fmt::format("invalid number of operands for call: {}", ops.size()));
    }
    emit(c);
  }

  /// `lock [fetch] op[32] [%rN+off], %rS`.
  void lock(std::vector<std::string> ops) {
    if (ops.size() < 3 || ops.size() > 4) fail("Invalid number of operands for lock");
    bool fetch = false;
    if (ops.size() == 4) {
      if (ops[0] != "fetch") fail("invalid lock modifier '" + ops[0] + "' (expected fetch)");
      fetch = true;
      ops.erase(ops.begin());
    }
    std::string op = ops[0];
    bool is32 = strip_suffix(op, "32");
    Atomic a{static_cast<uint8_t>(is32 ? 4 : 8)};
    std::tie(a.base, a.off) = mem(ops[1]);
    a.src = reg(ops[2]);
    if (op == "xchg" || op == "cmpxchg") {
      if (fetch) fail("lock " + op + " always fetches; drop 'fetch'");
      a.op = op == "xchg" ? BPF_XCHG : BPF_CMPXCHG;
      return emit(a);
    }
    for (const auto& k : kAtomicOps)
      if (op == k.name) {
        a.op = k.op | (fetch ? BPF_FETCH : 0);
        return emit(a);
      }
    fail("invalid atomic operation '" + ops[0] + "'");
  }

  void resolve() {
    for (const Fixup& f : fixups_) {
      size_t target;
      if (auto it = labels_.find(f.label); it != labels_.end())
        target = it->second;
      else if (f.label == "exit" && first_exit_)
        target = *first_exit_;
      else
        throw Error(fmt::format("line {}: invalid label '{}'", f.line, f.label));
      int64_t rel = static_cast<int64_t>(target) - static_cast<int64_t>(f.slot) - 1;
      Insn& i = out_[f.slot];
      if (f.imm32) {
        i.imm = static_cast<int32_t>(rel);
      } else {
        if (rel < INT16_MIN || rel > INT16_MAX)
          throw Error(fmt::format("line {}: jump to '{}' out of 16-bit range", f.line, f.label));
        i.off = static_cast<int16_t>(rel);
      }
    }
  }

  InsnVec out_;
  int line_ = 0;
  std::map<std::string, size_t> labels_;
  std::vector<Fixup> fixups_;
  std::optional<size_t> first_exit_;
};

}  // namespace

InsnVec assemble(std::string_view text) {
  return Assembler{}.run(text);
}

}  // namespace knod::isa
