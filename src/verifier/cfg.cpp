// Control-flow structure checks (kernel/bpf/verifier.c check_subprogs, check_cfg,
// check_max_stack_depth for the frame count).
#include "verifier/cfg.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace knod::verifier {
namespace {

bool is_local_call(const Insn& i) {
  return i.code == (BPF_JMP | BPF_CALL) && i.src_reg == BPF_PSEUDO_CALL;
}
bool is_func_ref(const Insn& i) {
  return is_lddw(i) && i.src_reg == BPF_PSEUDO_FUNC;
}

/// Target slot of the jump / call at pc, or nullopt when pc does not branch.
std::optional<int64_t> branch_target(const Insn& i, size_t pc) {
  const uint8_t cls = BPF_CLASS(i.code);
  if (is_local_call(i) || is_func_ref(i)) return int64_t(pc) + 1 + i.imm;
  if (cls != BPF_JMP && cls != BPF_JMP32) return std::nullopt;
  const uint8_t op = BPF_OP(i.code);
  if (op == BPF_CALL || op == BPF_EXIT) return std::nullopt;
  if (op == BPF_JA && cls == BPF_JMP32) return int64_t(pc) + 1 + i.imm;
  return int64_t(pc) + 1 + i.off;
}

}  // namespace

std::string check_cfg(const InsnVec& prog) {
  const size_t n = prog.size();
  std::vector<bool> second(n, false);  // 2nd slot of an ld_imm64
  for (size_t pc = 0; pc < n; ++pc)
    if (is_lddw(prog[pc]) && pc + 1 < n) second[++pc] = true;

  // Targets in range and on instruction boundaries; subprogram starts.
  std::set<size_t> starts{0};
  for (size_t pc = 0; pc < n; ++pc) {
    if (second[pc]) continue;
    auto t = branch_target(prog[pc], pc);
    if (!t) continue;
    if (*t < 0 || *t >= int64_t(n))
      return fmt::format("insn {}: jump out of range from insn {} to {}", pc, pc, *t);
    if (second[*t])
      return fmt::format("insn {}: jump into the middle of ld_imm64 at insn {}", pc, *t - 1);
    if (is_local_call(prog[pc]) || is_func_ref(prog[pc])) starts.insert(size_t(*t));
  }

  // Each subprogram: jumps stay inside, the last slot is exit or ja.
  std::vector<size_t> sub(starts.begin(), starts.end());
  sub.push_back(n);
  auto subprog_of = [&](size_t pc) {
    return size_t(std::upper_bound(sub.begin(), sub.end(), pc) - sub.begin() - 1);
  };
  for (size_t s = 0; s + 1 < sub.size(); ++s) {
    const size_t lo = sub[s], hi = sub[s + 1];
    for (size_t pc = lo; pc < hi; ++pc) {
      if (second[pc] || is_local_call(prog[pc]) || is_func_ref(prog[pc])) continue;
      auto t = branch_target(prog[pc], pc);
      if (t && (size_t(*t) < lo || size_t(*t) >= hi))
        return fmt::format("insn {}: jump out of range from insn {} to {}", pc, pc, *t);
    }
    const Insn& last = prog[hi - 1];
    if (second[hi - 1] || (last.code != (BPF_JMP | BPF_EXIT) && last.code != (BPF_JMP | BPF_JA) &&
                           last.code != (BPF_JMP32 | BPF_JA)))
      return fmt::format("insn {}: last insn is not an exit or jmp", hi - 1);
  }

  // Every slot reachable from main or a subprogram start (kernel check_cfg "unreachable insn").
  {
    std::vector<bool> seen(n, false);
    std::vector<size_t> todo(starts.begin(), starts.end());
    while (!todo.empty()) {
      size_t pc = todo.back();
      todo.pop_back();
      if (pc >= n || seen[pc]) continue;
      seen[pc] = true;
      const Insn& i = prog[pc];
      if (is_lddw(i)) {
        if (pc + 1 < n) seen[pc + 1] = true;
        todo.push_back(pc + 2);
        continue;
      }
      const uint8_t cls = BPF_CLASS(i.code), op = BPF_OP(i.code);
      const bool jmp = cls == BPF_JMP || cls == BPF_JMP32;
      if (jmp && op == BPF_EXIT) continue;
      auto t = branch_target(i, pc);
      if (t && !is_local_call(i)) todo.push_back(size_t(*t));
      if (!(jmp && op == BPF_JA)) todo.push_back(pc + 1);
    }
    for (size_t pc = 0; pc < n; ++pc)
      if (!seen[pc]) return fmt::format("insn {}: unreachable insn", pc);
  }

  // Call graph: no recursion, at most kMaxCallDepth frames on any path from main, and at most
  // kStackSize bytes of stack on any path (kernel check_max_stack_depth: each frame's depth,
  // the lowest r10 offset it accesses directly, rounded up to 16 as for JITed programs).
  const size_t nsub = sub.size() - 1;
  std::vector<int> own(nsub, 0);  // bytes below r10 each subprogram touches directly
  for (size_t pc = 0; pc < n; ++pc) {
    const Insn& i = prog[pc];
    const uint8_t cls = BPF_CLASS(i.code);
    if (second[pc] || (cls != BPF_LDX && cls != BPF_ST && cls != BPF_STX)) continue;
    const uint8_t base = cls == BPF_LDX || (BPF_MODE(i.code) == BPF_ATOMIC && i.imm == 0x100)
                             ? i.src_reg
                             : i.dst_reg;  // BPF_LOAD_ACQ reads [src + off]
    if (base == 10 && i.off < 0) own[subprog_of(pc)] = std::max(own[subprog_of(pc)], -int(i.off));
  }
  std::vector<std::vector<std::pair<size_t, size_t>>> callees(nsub);  // (callee, call pc)
  for (size_t pc = 0; pc < n; ++pc)
    if (!second[pc] && is_local_call(prog[pc]))
      callees[subprog_of(pc)].push_back({subprog_of(size_t(int64_t(pc) + 1 + prog[pc].imm)), pc});
  std::vector<int> state(nsub, 0);               // 0 new, 1 on the DFS path, 2 done
  std::vector<int> depth(nsub, 0);               // frames below and including this subprogram
  std::vector<std::pair<int, int>> bytes(nsub);  // deepest stack path from here: bytes, frames
  std::string err;
  std::function<int(size_t)> dfs = [&](size_t s) -> int {
    if (state[s] == 2) return depth[s];
    state[s] = 1;
    int d = 1;
    std::pair<int, int> below{0, 0};
    for (auto [c, pc] : callees[s]) {
      if (state[c] == 1) {
        err = fmt::format("insn {}: recursive call to insn {}", pc, sub[c]);
        return 0;
      }
      d = std::max(d, 1 + dfs(c));
      if (!err.empty()) return 0;
      below = std::max(below, bytes[c]);
    }
    state[s] = 2;
    bytes[s] = {(own[s] + 15) / 16 * 16 + below.first, below.second + 1};
    return depth[s] = d;
  };
  int frames = dfs(0);
  if (!err.empty()) return err;
  if (frames > kMaxCallDepth)
    return fmt::format("insn 0: the call stack of {} frames is too deep (max {})", frames,
                       kMaxCallDepth);
  if (bytes[0].first > kStackSize)
    return fmt::format("insn 0: combined stack size of {} calls is {}. Too large", bytes[0].second,
                       bytes[0].first);
  return "";
}

}  // namespace knod::verifier
