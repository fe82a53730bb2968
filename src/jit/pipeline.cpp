#include "jit/pipeline.h"

#include <llvm/Analysis/InlineCost.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/IPO/ModuleInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/CorrelatedValuePropagation.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/JumpThreading.h>
#include <llvm/Transforms/Scalar/SCCP.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include <algorithm>
#include <mutex>

#include "base/error.h"

extern "C" const unsigned char knod_rt_bitcode_x86_64[];
extern "C" const size_t knod_rt_bitcode_x86_64_size;

namespace knod::jit {

void init_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

void link_runtime(llvm::Module& m, const std::vector<std::string>& keep) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(knod_rt_bitcode_x86_64),
                        knod_rt_bitcode_x86_64_size);
  auto buf = llvm::MemoryBuffer::getMemBuffer(bytes, "knod_rt", false);
  auto rt = llvm::parseBitcodeFile(buf->getMemBufferRef(), m.getContext());
  if (!rt) throw Error("jit: bad runtime bitcode: " + llvm::toString(rt.takeError()));
  (*rt)->setDataLayout(m.getDataLayout());
  (*rt)->setTargetTriple(m.getTargetTriple());
  // The module's target decides CPU and features; the runtime must not pin generic x86-64.
  for (llvm::Function& f : **rt) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
  }
  if (llvm::Linker::linkModules(m, std::move(*rt)))
    throw Error("jit: linking the runtime bitcode failed");
  // The XDP slot loop calls a body that only a caller keeping it supplies (jit/executor.cpp).
  if (std::find(keep.begin(), keep.end(), "knod_rt_xdp_slots") == keep.end()) {
    if (llvm::Function* f = m.getFunction("knod_rt_xdp_slots")) f->eraseFromParent();
    if (llvm::Function* f = m.getFunction("knod_rt_body"); f && f->use_empty())
      f->eraseFromParent();
  }
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    if (std::find(keep.begin(), keep.end(), f.getName().str()) == keep.end())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

namespace {

/// -O2: the passes that pay off on lowered eBPF (registers in allocas, bounds checks, inlined
/// runtime helpers), in one round: half the compile time of LLVM's -O2 pipeline for ~2.5% more
/// instructions per packet (docs/PERFORMANCE.md). No loop or vectorisation passes: verified
/// eBPF loops are short and clang already unrolled what it wanted.
llvm::ModulePassManager knod_pipeline() {
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::ModuleInlinerPass(llvm::getInlineParams(2, 0)));
  mpm.addPass(llvm::GlobalDCEPass());  // runtime functions now inlined everywhere: not optimised
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));  // registers out of allocas
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::SCCPPass());
  fpm.addPass(llvm::CorrelatedValuePropagationPass());  // range facts of bounds checks
  fpm.addPass(llvm::JumpThreadingPass());
  fpm.addPass(llvm::GVNPass());  // repeated loads of packet and ctx fields
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::DSEPass());
  fpm.addPass(llvm::ADCEPass());
  fpm.addPass(llvm::SimplifyCFGPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.addPass(llvm::GlobalDCEPass());
  return mpm;
}

/// A PassBuilder for `tm` with its analysis managers registered and cross-linked.
struct Passes {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  explicit Passes(llvm::TargetMachine* tm) : pb(tm) {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
  }
};

}  // namespace

void optimize(llvm::Module& m, llvm::TargetMachine* tm, int level) {
  Passes p(tm);
  if (level == 2) {
    knod_pipeline().run(m, p.mam);
    return;
  }
  llvm::OptimizationLevel ol = level <= 0   ? llvm::OptimizationLevel::O0
                               : level == 1 ? llvm::OptimizationLevel::O1
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      level <= 0 ? p.pb.buildO0DefaultPipeline(ol) : p.pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, p.mam);
}

void cleanup_function(llvm::Function& f, llvm::TargetMachine* tm) {
  Passes p(tm);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.run(f, p.fam);
}

llvm::CodeGenOptLevel codegen_level(int level) {
  // -O2 generates machine code at Less, not Default: the same instructions per packet on the
  // examples (callgrind: icmp_echo 186, l4lb 226, vlan 250 at both) for 5% less compile time
  // (vlan, the slowest to compile: 51 -> 48 ms).
  return level <= 0   ? llvm::CodeGenOptLevel::None
         : level <= 2 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::Aggressive;
}

std::unique_ptr<llvm::TargetMachine> host_target_machine(int level) {
  init_native_target();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("jit: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(codegen_level(level));
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw Error("jit: " + llvm::toString(tm.takeError()));
  return std::move(*tm);
}

}  // namespace knod::jit
