#include "jit/slots.h"

#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <vector>

#include "base/error.h"
#include "jit/lower.h"
#include "jit/pipeline.h"

namespace knod::jit {

std::string slots_symbol(const std::string& name) {
  return name + "_slots";
}

void bind_slots(llvm::Module& m, const std::string& name) {
  llvm::Function* loop = m.getFunction(kSlotsRuntimeSymbol);
  llvm::Function* stub = m.getFunction("knod_rt_body");
  llvm::Function* body = m.getFunction(subprogram_symbol(name, 0));
  if (!loop || !stub || !body)
    throw Error("jit: no slot loop, body placeholder or body (" + name + ") in the module");
  loop->setName(slots_symbol(name));
  stub->replaceAllUsesWith(body);
  stub->eraseFromParent();
}

bool inline_body_into_slots(llvm::Module& m, const std::string& name, llvm::TargetMachine* tm,
                            int level) {
  llvm::Function* loop = m.getFunction(slots_symbol(name));
  llvm::Function* body = m.getFunction(subprogram_symbol(name, 0));
  if (!loop || !body) throw Error("jit: no slot loop or body (" + name + ") to inline");
  size_t size = 0;
  for (const llvm::BasicBlock& bb : *body) size += bb.size();
  if (level <= 0 || size > kSlotsBodyMax) {
    loop->eraseFromParent();
    return false;
  }
  std::vector<llvm::CallBase*> calls;
  for (llvm::User* u : body->users())
    if (auto* cb = llvm::dyn_cast<llvm::CallBase>(u);
        cb && cb->getFunction() == loop && cb->getCalledOperand() == body)
      calls.push_back(cb);
  for (llvm::CallBase* cb : calls) {
    llvm::InlineFunctionInfo ifi;
    if (!llvm::InlineFunction(*cb, ifi).isSuccess())
      throw Error("jit: could not inline the body into its slot loop");
  }
  cleanup_function(*loop, tm);
  // The entry and the body itself now serve only what does not run batches on the CPU device
  // (Runtime::run_packet, a tail call to this program): their IR is optimised already, their
  // machine code is generated the quick way (FastISel), ~6 ms less per compile.
  for (llvm::Function* f : {body, m.getFunction(name)}) {
    f->addFnAttr(llvm::Attribute::NoInline);
    f->addFnAttr(llvm::Attribute::OptimizeNone);
  }
  return true;
}

namespace {
/// Removes the internal functions nothing calls, until none is left (a chain of them too).
void drop_unused(llvm::Module& m) {
  for (bool again = true; again;) {
    again = false;
    for (auto it = m.begin(); it != m.end();) {
      llvm::Function& f = *it++;
      if (!f.isDeclaration() && f.hasLocalLinkage() && f.use_empty()) {
        f.eraseFromParent();
        again = true;
      }
    }
  }
}
}  // namespace

std::unique_ptr<llvm::Module> split_off_entry(llvm::Module& m, const std::string& name) {
  const std::string loop = slots_symbol(name);
  if (!m.global_empty()) throw Error("jit: a module with global variables cannot be split");
  std::unique_ptr<llvm::Module> e = llvm::CloneModule(m);
  if (llvm::Function* f = e->getFunction(loop)) f->eraseFromParent();
  drop_unused(*e);
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && f.getName() != loop) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  drop_unused(m);
  return e;
}

}  // namespace knod::jit
