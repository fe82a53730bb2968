// The programs of a vm::Env as one GPU module: each env.programs[i] lowered by jit::lower as
// `knod_p<i>` (tail-call index i), with the ld_imm64 host values vm::prepare() produced
// (maps::Map*, value pool addresses) rewritten by `relocate` (to device addresses).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jit/lower.h"
#include "vm/abi.h"

namespace knod::device::gpu {

/// Returns the module and fills `names` (symbol of program i). `relocate` maps a 64-bit
/// ld_imm64 value to the value the GPU must see (identity for values it does not know).
/// Throws knod::Error when a program cannot be lowered.
std::unique_ptr<llvm::Module> lower_env(const vm::Env& env, jit::CtxKind ctx,
                                        llvm::LLVMContext& llctx,
                                        const std::function<uint64_t(uint64_t)>& relocate,
                                        std::vector<std::string>* names);

}  // namespace knod::device::gpu
