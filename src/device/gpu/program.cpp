// Lowers every program of an env into one module (see program.h).
#include "device/gpu/program.h"

#include <fmt/core.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>

#include "base/error.h"

namespace knod::device::gpu {

std::unique_ptr<llvm::Module> lower_env(const vm::Env& env, jit::CtxKind ctx,
                                        llvm::LLVMContext& llctx,
                                        const std::function<uint64_t(uint64_t)>& relocate,
                                        std::vector<std::string>* names) {
  std::unique_ptr<llvm::Module> all;
  jit::LowerOptions o;
  o.ctx = ctx;
  names->clear();
  for (size_t p = 0; p < env.programs.size(); ++p) {
    InsnVec insns = env.programs[p]->insns;
    for (size_t pc = 0; pc + 1 < insns.size(); ++pc) {
      if (!is_lddw(insns[pc])) continue;
      uint64_t v = uint32_t(insns[pc].imm) | (uint64_t(uint32_t(insns[pc + 1].imm)) << 32);
      uint64_t r = relocate(v);
      insns[pc].imm = int32_t(uint32_t(r));
      insns[pc + 1].imm = int32_t(uint32_t(r >> 32));
      ++pc;
    }
    o.name = fmt::format("knod_p{}", p);
    names->push_back(o.name);
    auto m = jit::lower(insns, llctx, o);
    if (!all)
      all = std::move(m);
    else if (llvm::Linker::linkModules(*all, std::move(m)))
      throw Error(fmt::format("GPU: linking program {} into the module failed", p));
  }
  if (!all) throw Error("GPU: the env has no programs");
  return all;
}

}  // namespace knod::device::gpu
