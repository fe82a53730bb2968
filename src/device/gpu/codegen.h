// GPU code generation shared by the NVIDIA (PTX) and AMD (code object) back ends: takes a
// module from jit::lower (programs `i64 @<name>(ptr %run, i64 %r1, i64 %r2)` calling the
// runtime ABI of jit/runtime/rt.h), links the GPU runtime (runtime.c as bitcode), adds the
// batch kernel `knod_xdp_batch(ptr knod_gpu_args)` (one packet per thread, gpu_abi.h) and the
// persistent kernel `knod_xdp_persistent(ptr knod_gpu_mailbox)` (mailbox ring, gpu_abi.h),
// optimizes (O2) and emits PTX text or an AMDGPU relocatable object.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace knod::device::gpu {

/// kHostSim: x86-64 code for the host-simulated GPU (host_sim.h); the runtime then calls
/// knod_sim_global_id / knod_sim_now_ns, which the host defines.
enum class Arch { kNvptx, kAmdgcn, kHostSim };

struct Target {
  Arch arch = Arch::kNvptx;
  std::string cpu;     ///< "sm_90", "gfx1030"...; kHostSim: "" = the host CPU
  std::string device;  ///< for messages: "cuda", "amdgpu", "gpusim"
};

/// Name of the batch kernel in every module knod emits.
constexpr const char* kKernelName = "knod_xdp_batch";
/// The persistent kernel in every module: `knod_xdp_persistent(ptr knod_gpu_mailbox)`, resident
/// until the host posts EXIT (gpu_abi.h mailbox ring, runtime.c knod_gpu_persistent).
constexpr const char* kPersistentKernelName = "knod_xdp_persistent";

/// Throws knod::Error "helper bpf_<name> (<id>) not supported on <device> yet" for the first
/// helper call in `m` (calls of knod_rt_helper with a constant id) the GPU runtime lacks.
void check_helpers(const llvm::Module& m, std::string_view device);

/// Links the runtime into `m`, adds `knod_gpu_call_prog` (index i → programs[i]) and the two
/// kernels, internalizes everything else and optimizes at O2 for `t`. `programs` are the entry
/// symbols in `m` (tail-call targets by index; the kernels start at knod_gpu_args.entry).
/// Throws knod::Error on unsupported helpers, link or verifier failures.
void prepare_module(llvm::Module& m, const Target& t, const std::vector<std::string>& programs);

/// Emits `m` (after prepare_module) for `t`: PTX text (nvptx) or an ELF object (amdgcn,
/// kHostSim).
std::string emit(llvm::Module& m, const Target& t);

/// Targets knod can compile for: "sm_80", "sm_90" / "gfx900", "gfx1030", "gfx942", "gfx1100".
const std::vector<std::string>& nvptx_targets();
const std::vector<std::string>& amdgcn_targets();

}  // namespace knod::device::gpu
