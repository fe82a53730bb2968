// PTX for NVIDIA GPUs from a lowered program module (LLVM NVPTX back end).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace knod::device::cuda {

/// Turns `m` (from jit::lower, entry `knod_prog`) into PTX text for `sm` ("sm_80", "sm_90")
/// with the batch kernel `knod_xdp_batch` (device/gpu/codegen.h). `m` is changed (runtime
/// linked, optimized). Throws knod::Error for an unsupported helper or target.
std::string compile_ptx(llvm::Module& m, std::string_view sm);

/// Same, for a module holding several programs (tail-call targets by index in `programs`).
std::string compile_ptx(llvm::Module& m, std::string_view sm,
                        const std::vector<std::string>& programs);

}  // namespace knod::device::cuda
