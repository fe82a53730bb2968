// GPU code generation (see codegen.h): runtime linking, kernel, O2, LLVM NVPTX/AMDGPU back ends.
#include "device/gpu/codegen.h"

#include <fmt/core.h>
#include <linux/bpf.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include <mutex>

#include "base/error.h"
#include "device/gpu/runtime_bitcode.h"

namespace knod::device::gpu {
namespace {

const char* const kHelperNames[] = {
#define KNOD_NAME(x) "bpf_" #x
    __BPF_FUNC_MAPPER(KNOD_NAME)
#undef KNOD_NAME
};

bool gpu_helper(int64_t id) {
  switch (id) {
#define KNOD_CASE(n, name) case n:
    KNOD_GPU_HELPERS_CASES
#undef KNOD_CASE
    return true;
  }
  return false;
}

void init_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

const char* triple(const Target& t) {
  switch (t.arch) {
    case Arch::kNvptx:
      return "nvptx64-nvidia-cuda";
    case Arch::kAmdgcn:
      return "amdgcn-amd-amdhsa";
    case Arch::kHostSim:
      break;
  }
  return "x86_64-pc-linux-gnu";
}

std::string cpu_of(const Target& t) {
  return t.arch == Arch::kHostSim && t.cpu.empty() ? llvm::sys::getHostCPUName().str() : t.cpu;
}

std::unique_ptr<llvm::TargetMachine> machine(const Target& t) {
  init_targets();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple(t), err);
  if (!target) throw Error(fmt::format("LLVM has no {} back end: {}", triple(t), err));
  if (t.arch != Arch::kHostSim) {
    const auto& known = t.arch == Arch::kNvptx ? nvptx_targets() : amdgcn_targets();
    if (std::find(known.begin(), known.end(), t.cpu) == known.end())
      throw Error(fmt::format("unknown {} target '{}'", t.device, t.cpu));
  }
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple(t), cpu_of(t), "", opts, llvm::Reloc::PIC_, std::nullopt,
                                  llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw Error(fmt::format("cannot create an LLVM target machine for {}", t.cpu));
  return tm;
}

std::unique_ptr<llvm::Module> load_runtime(llvm::LLVMContext& ctx, Arch arch) {
  std::string_view bc = arch == Arch::kNvptx    ? runtime_nvptx_bc()
                        : arch == Arch::kAmdgcn ? runtime_amdgcn_bc()
                                                : runtime_host_bc();
  auto buf =
      llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(bc.data(), bc.size()), "knod-gpu-rt", false);
  auto m = llvm::parseBitcodeFile(buf->getMemBufferRef(), ctx);
  if (!m) throw Error("GPU runtime bitcode: " + llvm::toString(m.takeError()));
  return std::move(*m);
}

// The lowering is target neutral (host allocas in address space 0); AMDGPU keeps the stack
// in address space 5 ("A5" in its data layout): move each alloca there and cast back.
void move_allocas(llvm::Module& m, unsigned as) {
  for (llvm::Function& f : m) {
    std::vector<llvm::AllocaInst*> todo;
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i); a && a->getAddressSpace() != as)
        todo.push_back(a);
    for (llvm::AllocaInst* a : todo) {
      auto* n = new llvm::AllocaInst(a->getAllocatedType(), as, a->getArraySize(), a->getAlign(),
                                     a->getName(), a->getIterator());
      auto* cast = new llvm::AddrSpaceCastInst(n, a->getType(), "", a->getIterator());
      a->replaceAllUsesWith(cast);
      a->eraseFromParent();
    }
  }
}

// Atomics on the eBPF stack (lock add [r10-8]...) touch thread-private memory: plain
// load/op/store is exact there, and the AMDGPU back end of LLVM 19 cannot select atomics on
// private (addrspace 5) memory.
void lower_stack_atomics(llvm::Module& m) {
  for (llvm::Function& f : m) {
    std::vector<llvm::Instruction*> todo;
    for (llvm::Instruction& i : llvm::instructions(f)) {
      llvm::Value* p = nullptr;
      if (auto* r = llvm::dyn_cast<llvm::AtomicRMWInst>(&i)) p = r->getPointerOperand();
      if (auto* x = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i)) p = x->getPointerOperand();
      if (p && llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(p, 0))) todo.push_back(&i);
    }
    for (llvm::Instruction* i : todo) {
      if (auto* r = llvm::dyn_cast<llvm::AtomicRMWInst>(i))
        llvm::lowerAtomicRMWInst(r);
      else
        llvm::lowerAtomicCmpXchgInst(llvm::cast<llvm::AtomicCmpXchgInst>(i));
    }
  }
}

void strip_host_attributes(llvm::Module& m) {
  for (llvm::Function& f : m) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
  }
}

// i64 knod_gpu_call_prog(i32 idx, ptr run, i64 r1, i64 r2): switch over the programs.
void add_dispatch(llvm::Module& m, const std::vector<std::string>& programs) {
  llvm::LLVMContext& c = m.getContext();
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* i32 = llvm::Type::getInt32Ty(c);
  auto* ptr = llvm::PointerType::get(c, 0);
  auto* fty = llvm::FunctionType::get(i64, {i32, ptr, i64, i64}, false);
  llvm::Function* f = m.getFunction("knod_gpu_call_prog");
  if (!f)
    f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, "knod_gpu_call_prog", m);
  if (!f->isDeclaration()) throw Error("knod_gpu_call_prog defined twice");
  f->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  auto* dflt = llvm::BasicBlock::Create(c, "none", f);
  auto* sw = b.CreateSwitch(f->getArg(0), dflt, programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    llvm::Function* p = m.getFunction(programs[i]);
    if (!p || p->isDeclaration())
      throw Error(fmt::format("GPU module has no program '{}'", programs[i]));
    auto* bb = llvm::BasicBlock::Create(c, "p" + std::to_string(i), f);
    sw->addCase(b.getInt32(i), bb);
    llvm::IRBuilder<> pb(bb);
    pb.CreateRet(pb.CreateCall(p, {f->getArg(1), f->getArg(2), f->getArg(3)}));
  }
  llvm::IRBuilder<>(dflt).CreateRet(b.getInt64(0));  // the host validates program indices
}

// A kernel `name(ptr)` that calls the runtime's `impl` with its one argument.
void add_kernel(llvm::Module& m, const Target& t, const char* name, const char* impl,
                const char* arg) {
  llvm::LLVMContext& c = m.getContext();
  auto* ptr = llvm::PointerType::get(c, 0);
  llvm::Function* entry = m.getFunction(impl);
  if (!entry) throw Error(fmt::format("GPU runtime has no {}", impl));
  auto* k = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr}, false),
                                   llvm::GlobalValue::ExternalLinkage, name, m);
  k->getArg(0)->setName(arg);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", k));
  b.CreateCall(entry, {k->getArg(0)});
  b.CreateRetVoid();
  if (t.arch == Arch::kNvptx) {
    auto* md = m.getOrInsertNamedMetadata("nvvm.annotations");
    md->addOperand(
        llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(k), llvm::MDString::get(c, "kernel"),
                              llvm::ConstantAsMetadata::get(b.getInt32(1))}));
  } else if (t.arch == Arch::kAmdgcn) {
    k->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    k->addFnAttr("amdgpu-flat-work-group-size", "1,256");
  }
}

bool is_kernel(llvm::StringRef n) {
  return n == kKernelName || n == kPersistentKernelName;
}

}  // namespace

const std::vector<std::string>& nvptx_targets() {
  static const std::vector<std::string> v{"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90"};
  return v;
}
const std::vector<std::string>& amdgcn_targets() {
  static const std::vector<std::string> v{"gfx900", "gfx1030", "gfx942", "gfx1100"};
  return v;
}

void check_helpers(const llvm::Module& m, std::string_view device) {
  const llvm::Function* h = m.getFunction("knod_rt_helper");
  if (!h) return;
  for (const llvm::User* u : h->users()) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(u);
    if (!call || call->arg_size() < 2) continue;
    const auto* id = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(1));
    if (!id)
      throw Error(fmt::format("helper call with a computed id: not supported on {}", device));
    int64_t n = id->getSExtValue();
    if (gpu_helper(n)) continue;
    const char* name = n >= 0 && n < int64_t(std::size(kHelperNames)) ? kHelperNames[n] : "unknown";
    throw Error(fmt::format("helper {} ({}) not supported on {} yet", name, n, device));
  }
}

void prepare_module(llvm::Module& m, const Target& t, const std::vector<std::string>& programs) {
  check_helpers(m, t.device);
  auto tm = machine(t);
  llvm::LLVMContext& c = m.getContext();
  auto rt = load_runtime(c, t.arch);
  m.setTargetTriple(triple(t));
  m.setDataLayout(tm->createDataLayout());
  rt->setDataLayout(tm->createDataLayout());
  strip_host_attributes(m);
  strip_host_attributes(*rt);
  if (t.arch == Arch::kAmdgcn) move_allocas(m, m.getDataLayout().getAllocaAddrSpace());
  // The lowering declares the runtime functions; the runtime defines them.
  if (llvm::Linker::linkModules(m, std::move(rt)))
    throw Error(fmt::format("linking the GPU runtime into the {} module failed", t.device));
  add_dispatch(m, programs);
  add_kernel(m, t, kKernelName, "knod_gpu_entry", "args");
  add_kernel(m, t, kPersistentKernelName, "knod_gpu_persistent", "mailbox");
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    if (!is_kernel(f.getName())) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.addFnAttr("target-cpu", cpu_of(t));
  }
  for (llvm::GlobalVariable& g : m.globals())
    if (!g.isDeclaration()) g.setLinkage(llvm::GlobalValue::InternalLinkage);
  std::string verr;
  llvm::raw_string_ostream vos(verr);
  if (llvm::verifyModule(m, &vos)) throw Error("GPU module does not verify: " + verr);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
  lower_stack_atomics(m);

  // Anything still external (other than intrinsics) cannot be resolved on a GPU; the host
  // simulation resolves knod_sim_* (and the mem* calls x86-64 code generation may emit).
  auto host_symbol = [&](llvm::StringRef n) {
    return t.arch == Arch::kHostSim && n.starts_with("knod_sim_");
  };
  for (llvm::Function& f : m)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() && !host_symbol(f.getName()))
      throw Error(fmt::format("{}: unresolved function '{}' in the GPU module", t.device,
                              f.getName().str()));
}

std::string emit(llvm::Module& m, const Target& t) {
  auto tm = machine(t);
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  auto kind = t.arch == Arch::kNvptx ? llvm::CodeGenFileType::AssemblyFile
                                     : llvm::CodeGenFileType::ObjectFile;
  if (tm->addPassesToEmitFile(pm, os, nullptr, kind))
    throw Error(fmt::format("LLVM cannot emit code for {}", t.cpu));
  pm.run(m);
  return std::string(out.data(), out.size());
}

}  // namespace knod::device::gpu
