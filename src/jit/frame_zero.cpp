#include "jit/frame_zero.h"

#include <algorithm>
#include <bitset>
#include <deque>

#include "jit/cfg.h"

namespace knod::jit {
namespace {

using Bytes = std::bitset<kStackSize>;  ///< bit k - 1: the byte at r10 - k

/// Bytes [r10 + off, r10 + off + n) as bits (the part inside the frame).
Bytes span(int32_t off, uint32_t n) {
  Bytes b;
  const int64_t end = std::min<int64_t>(int64_t(off) + n, 0);
  for (int64_t a = std::max<int64_t>(off, -kStackSize); a < end; ++a) b.set(size_t(-a - 1));
  return b;
}

}  // namespace

FrameZero frame_zero(const InsnVec& insns, uint32_t lo, uint32_t hi,
                     const std::vector<StackUse>& uses, const std::vector<bool>& reachable) {
  // written[pc - lo]: bytes every path to pc has stored (top, all ones, until first reached).
  std::vector<Bytes> written(hi - lo, Bytes().set());
  std::vector<bool> seen(hi - lo, false);
  Bytes need;
  std::deque<uint32_t> work{lo};
  written[0].reset();
  seen[0] = true;
  auto flow = [&](int64_t to, const Bytes& w) {
    if (to < lo || to >= hi) return;
    const Bytes met = seen[to - lo] ? (written[to - lo] & w) : w;
    if (seen[to - lo] && met == written[to - lo]) return;
    seen[to - lo] = true;
    written[to - lo] = met;
    work.push_back(uint32_t(to));
  };
  while (!work.empty()) {
    const uint32_t pc = work.front();
    work.pop_front();
    if (!reachable[pc - lo]) continue;
    Bytes w = written[pc - lo];
    const StackUse& u = uses[pc];
    for (const StackRange& r : u.read)
      if (r.n) need |= span(r.off, r.n) & ~w;
    if (u.write.n) w |= span(u.write.off, u.write.n);
    const Insn& i = insns[pc];
    if (auto t = jump_target(i, pc)) flow(*t, w);
    if (!ends_flow(i)) flow(pc + (is_lddw(i) ? 2 : 1), w);
  }
  if (need.none()) return {};
  uint32_t deep = 0, shallow = kStackSize;
  for (uint32_t k = 1; k <= kStackSize; ++k)
    if (need.test(k - 1)) deep = k, shallow = std::min(shallow, k - 1);
  return {(deep + 15) / 16 * 16, shallow / 16 * 16};
}

}  // namespace knod::jit
