#include "jit/emit.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "base/error.h"
#include "jit/pipeline.h"
#include "jit/slots.h"

namespace knod::jit {

std::string emit(const InsnVec& insns, const EmitOptions& opts, LowerStats* stats) {
  llvm::LLVMContext ctx;
  LowerOptions lo;
  lo.name = opts.name;
  lo.ctx = opts.ctx;
  lo.maps = opts.maps;
  LowerStats local;
  LowerStats& st = stats ? *stats : local;
  auto m = lower(insns, ctx, lo, &st);
  auto tm = host_target_machine(opts.opt_level);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  if (opts.link_runtime || opts.assembly) {
    std::vector<std::string> keep{lo.name};
    for (uint32_t pc : st.subprogram_pcs) keep.push_back(subprogram_symbol(lo.name, pc));
    const bool slots = opts.slot_loop && opts.ctx == CtxKind::kXdp;
    if (slots) keep.push_back(kSlotsRuntimeSymbol);
    link_runtime(*m, keep);
    if (slots) bind_slots(*m, lo.name);
    optimize(*m, tm.get(), opts.opt_level);
    if (slots) inline_body_into_slots(*m, lo.name, tm.get(), opts.opt_level);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  if (!opts.assembly) {
    m->print(os, nullptr);
    return os.str();
  }
  llvm::SmallString<4096> buf;
  llvm::raw_svector_ostream as(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, as, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("jit: the host target cannot emit assembly");
  pm.run(*m);
  return std::string(buf.str());
}

}  // namespace knod::jit
