// Program preparation (see prepare.h).
#include "vm/prepare.h"

#include <fmt/core.h>

#include "base/error.h"
#include "verifier/verifier.h"

namespace knod::vm {
namespace {

void set_imm64(Insn* slots, uint64_t v) {
  slots[0].src_reg = 0;
  slots[0].imm = static_cast<int32_t>(static_cast<uint32_t>(v));
  slots[1].imm = static_cast<int32_t>(static_cast<uint32_t>(v >> 32));
}

maps::Map* map_at(const Env& env, int32_t idx, size_t pc) {
  if (idx < 0 || static_cast<size_t>(idx) >= env.maps.size() || !env.maps[idx])
    throw Error(fmt::format("insn {}: ld_imm64 references map {} (object has {} maps)", pc, idx,
                            env.maps.size()));
  return env.maps[idx].get();
}

}  // namespace

Program prepare(std::string name, const InsnVec& insns, const Env& env) {
  verifier::check_structure(insns);
  Program p{std::move(name), insns};
  for (size_t pc = 0; pc < p.insns.size(); ++pc) {
    Insn& i = p.insns[pc];
    if (i.code == (BPF_JMP | BPF_CALL) && i.src_reg == 0) {
      if (i.imm < 0 || i.imm >= kMaxHelperId || !env.helpers || !env.helpers->fn[i.imm])
        throw Error(fmt::format("unknown helper {} (insn {})", i.imm, pc));
      if (env.helpers->gpl_only[i.imm] && !env.gpl_compatible)
        throw Error(
            fmt::format("insn {}: helper {} ({}) is GPL-only and the object's license is not "
                        "GPL-compatible (kernel: cannot call GPL-restricted function from non-GPL "
                        "compatible program)",
                        pc, i.imm, env.helpers->name[i.imm] ? env.helpers->name[i.imm] : "?"));
      continue;
    }
    if (!is_lddw(i)) continue;
    switch (i.src_reg) {
      case 0:
      case BPF_PSEUDO_FUNC:
        break;
      case BPF_PSEUDO_MAP_FD:
      case BPF_PSEUDO_MAP_IDX:
        set_imm64(&i, reinterpret_cast<uint64_t>(map_at(env, i.imm, pc)));
        break;
      case BPF_PSEUDO_MAP_VALUE:
      case BPF_PSEUDO_MAP_IDX_VALUE: {
        maps::Map* m = map_at(env, i.imm, pc);
        const uint32_t off = static_cast<uint32_t>(p.insns[pc + 1].imm);
        const uint32_t key0 = 0;
        void* value = m->def().key_size == sizeof key0 ? m->lookup(&key0, 0) : nullptr;
        if (!value)
          throw Error(fmt::format("insn {}: map '{}' has no direct value (key 0)", pc, m->name()));
        if (off >= m->def().value_size)
          throw Error(fmt::format("insn {}: offset {} outside the value of map '{}' ({} bytes)", pc,
                                  off, m->name(), m->def().value_size));
        set_imm64(&i, reinterpret_cast<uint64_t>(value) + off);
        break;
      }
      default:
        throw Error(fmt::format("insn {}: unsupported ld_imm64 source {}", pc, int(i.src_reg)));
    }
    ++pc;
  }
  return p;
}

void add_value_regions(Env& env) {
  for (const auto& m : env.maps)
    for (const auto& p : m->value_pools()) {
      const auto lo = reinterpret_cast<uint64_t>(p.base);
      env.static_regions.push_back(
          Region{lo, lo + p.bytes, !m->prog_readonly(), p.stride, p.value_size});
    }
}

}  // namespace knod::vm
