// Module preparation shared by the host JIT and `knod jit`: link the runtime bitcode into a
// lowered module, internalise it, and run the LLVM optimisation pipeline (-O0..-O3).
#pragma once

#include <llvm/Support/CodeGen.h>

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
class TargetMachine;
}  // namespace llvm

namespace knod::jit {

/// Links the host (x86-64) runtime bitcode into `m` and makes every runtime function
/// internal, so only the symbols in `keep` stay external. Throws knod::Error on a bad bitcode.
void link_runtime(llvm::Module& m, const std::vector<std::string>& keep);

/// Optimises `m` with `tm`'s target information: 0 and 1 LLVM's -O0 / -O1 pipelines, 2 (the
/// default) knod's pipeline (pipeline.cpp knod_pipeline: half LLVM -O2's compile time), 3
/// LLVM's -O3 pipeline.
void optimize(llvm::Module& m, llvm::TargetMachine* tm, int level);

/// A short function pass list (SROA, InstCombine, SimplifyCFG, EarlyCSE) for a function of an
/// optimised module into which a call was just inlined (the XDP slot loop, jit/executor.cpp).
void cleanup_function(llvm::Function& f, llvm::TargetMachine* tm);

/// The machine-code optimisation level for knod's -O `level` (0-3): None, Less for 1 and 2,
/// Aggressive for 3.
llvm::CodeGenOptLevel codegen_level(int level);

/// A TargetMachine for the host CPU (features detected) at codegen codegen_level(level).
std::unique_ptr<llvm::TargetMachine> host_target_machine(int level);

/// Initialises LLVM's native target once (thread-safe).
void init_native_target();

}  // namespace knod::jit
