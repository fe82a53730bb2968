// check_structure: per-slot field checks, then control flow (see verifier.h).
#include "verifier/verifier.h"

#include <fmt/core.h>

#include "base/error.h"
#include "verifier/cfg.h"
#include "verifier/checks.h"

namespace knod::verifier {

namespace {
constexpr size_t kMaxInsns = 1'000'000;  // BPF_COMPLEXITY_LIMIT_INSNS
}

void check_structure(const InsnVec& prog) {
  if (prog.empty()) throw Error("empty program");
  if (prog.size() > kMaxInsns)
    throw Error(fmt::format("program of {} insns is too large (max {})", prog.size(), kMaxInsns));
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const Insn& i = prog[pc];
    std::string e;
    switch (BPF_CLASS(i.code)) {
      case BPF_ALU:
      case BPF_ALU64:
        e = check_alu(i);
        break;
      case BPF_LDX:
      case BPF_ST:
      case BPF_STX:
        e = check_mem(i);
        break;
      case BPF_JMP:
      case BPF_JMP32:
        e = check_jmp(i);
        break;
      case BPF_LD:
        e = check_ld(prog.data(), prog.size(), pc);
        if (e.empty()) ++pc;  // skip the second slot
        break;
    }
    if (!e.empty()) throw Error(fmt::format("insn {}: {} (code {:#04x})", pc, e, i.code));
  }
  if (std::string e = check_cfg(prog); !e.empty()) throw Error(e);
}

}  // namespace knod::verifier
