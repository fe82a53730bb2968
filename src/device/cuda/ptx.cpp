// PTX generation: device/gpu codegen with the nvptx64-nvidia-cuda target.
#include "device/cuda/ptx.h"

#include "device/gpu/codegen.h"

namespace knod::device::cuda {

std::string compile_ptx(llvm::Module& m, std::string_view sm,
                        const std::vector<std::string>& programs) {
  gpu::Target t{gpu::Arch::kNvptx, std::string(sm), "cuda"};
  gpu::prepare_module(m, t, programs);
  return gpu::emit(m, t);
}

std::string compile_ptx(llvm::Module& m, std::string_view sm) {
  return compile_ptx(m, sm, {"knod_prog"});
}

}  // namespace knod::device::cuda
