// AMD GPU code objects (.hsaco) from a lowered program module: LLVM AMDGPU back end, then
// `ld.lld-19 -shared` (the ROCm loader takes a shared ELF; kernel descriptor from the
// amdgpu_kernel calling convention). Running them (KFD/HSA) is not implemented yet.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace knod::device::amdgpu {

/// The code object bytes for `gpu` ("gfx900", "gfx1030", "gfx942", "gfx1100") of `m` (from
/// jit::lower, entry `knod_prog`), kernel `knod_xdp_batch` whose only kernarg is a pointer
/// to knod_gpu_args (device/gpu/gpu_abi.h). `m` is changed. Throws knod::Error for an
/// unsupported helper or target, or when ld.lld fails.
std::string compile_code_object(llvm::Module& m, std::string_view gpu);
std::string compile_code_object(llvm::Module& m, std::string_view gpu,
                                const std::vector<std::string>& programs);

/// Links an AMDGPU relocatable object into a code object with ld.lld (-shared).
std::string link_code_object(const std::string& object);

}  // namespace knod::device::amdgpu
