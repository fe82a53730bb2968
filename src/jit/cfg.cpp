#include "jit/cfg.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace knod::jit {

static bool is_jmp_class(const Insn& i) {
  return insn_class(i) == BPF_JMP || insn_class(i) == BPF_JMP32;
}

std::optional<int64_t> jump_target(const Insn& i, uint32_t pc) {
  if (!is_jmp_class(i)) return std::nullopt;
  uint8_t op = BPF_OP(i.code);
  if (op == BPF_CALL || op == BPF_EXIT) return std::nullopt;
  if (op == BPF_JA && insn_class(i) == BPF_JMP32) return int64_t(pc) + 1 + i.imm;
  return int64_t(pc) + 1 + i.off;
}

bool ends_flow(const Insn& i) {
  if (!is_jmp_class(i)) return false;
  uint8_t op = BPF_OP(i.code);
  return op == BPF_EXIT || op == BPF_JA;
}

std::vector<uint32_t> find_subprograms(const InsnVec& insns) {
  std::vector<uint32_t> subs{0};
  for (uint32_t pc = 0; pc < insns.size(); ++pc) {
    const Insn& i = insns[pc];
    bool call = i.code == (BPF_JMP | BPF_CALL) && i.src_reg == BPF_PSEUDO_CALL;
    bool func = is_lddw(i) && i.src_reg == BPF_PSEUDO_FUNC;
    if (call || func) {
      int64_t t = int64_t(pc) + 1 + i.imm;
      if (t < 0 || t >= int64_t(insns.size()))
        throw Error("jit: call target " + std::to_string(t) + " at pc " + std::to_string(pc) +
                    " is outside the program");
      subs.push_back(uint32_t(t));
    }
    if (is_lddw(i)) ++pc;
  }
  std::sort(subs.begin(), subs.end());
  subs.erase(std::unique(subs.begin(), subs.end()), subs.end());
  return subs;
}

uint32_t subprogram_end(const std::vector<uint32_t>& subs, size_t i, size_t ninsns) {
  return i + 1 < subs.size() ? subs[i + 1] : uint32_t(ninsns);
}

std::vector<bool> block_leaders(const InsnVec& insns, uint32_t lo, uint32_t hi) {
  std::vector<bool> lead(hi - lo + 1, false);
  lead[0] = true;
  for (uint32_t pc = lo; pc < hi; ++pc) {
    const Insn& i = insns[pc];
    if (auto t = jump_target(i, pc)) {
      if (*t >= lo && *t < hi) lead[*t - lo] = true;
      lead[pc + 1 - lo] = true;
    } else if (ends_flow(i)) {
      lead[pc + 1 - lo] = true;
    }
    if (is_lddw(i)) ++pc;
  }
  return lead;
}

}  // namespace knod::jit
