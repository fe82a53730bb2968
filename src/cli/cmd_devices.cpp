// `knod devices`: lists the devices knod can use: the CPU (cores), each CUDA GPU (name, SMs,
// memory) or why there is none, and the AMD targets `knod jit --target` makes code objects for.
#include <fmt/core.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "base/error.h"
#include "cli/command.h"
#include "device/gpu/codegen.h"

// knod_cuda (and with it cuda.h) is built only where the CUDA headers are installed.
#if __has_include(<cuda.h>)
#define KNOD_HAVE_CUDA 1
#include "device/cuda/device.h"
#include "device/cuda/devices.h"
#include "device/cuda/driver.h"
#endif

namespace {

#ifdef KNOD_HAVE_CUDA

// `--device cuda[:N]`: opens that device (driver, ordinal, context) and describes it, or fails
// with the driver's one-line error.
int check(const std::string& spec) {
  namespace cuda = knod::device::cuda;
  if (cuda::parse_device_name(spec) < 0)
    throw knod::Error(fmt::format("unknown device '{}' (cpu, cuda, cuda:N)", spec));
  auto dev = cuda::Device::open(spec);
  const auto& d = dev->info();
  fmt::print("cuda:{} {}, {} SMs, {:.1f} GiB: usable\n", d.ordinal, d.name, d.sms,
             double(d.memory) / double(1ull << 30));
  return 0;
}

void list_cuda() {
  namespace cuda = knod::device::cuda;
  std::string why;
  if (!cuda::Driver::try_get(&why)) {
    // "no NVIDIA driver (libcuda.so.1 not found)" → "no GPU (libcuda.so.1 not found)"
    std::string_view prefix = "no NVIDIA driver (";
    if (why.starts_with(prefix) && why.ends_with(")"))
      fmt::print("cuda      no GPU ({})\n",
                 why.substr(prefix.size(), why.size() - prefix.size() - 1));
    else
      fmt::print("cuda      no GPU ({})\n", why);
  } else {
    auto devs = cuda::list_devices();
    if (devs.empty()) fmt::print("cuda      no GPU (the driver reports 0 CUDA devices)\n");
    for (const auto& d : devs)
      fmt::print("cuda:{:<4} {}, {} SMs, {:.1f} GiB, compute {}.{} ({})\n", d.ordinal, d.name,
                 d.sms, double(d.memory) / double(1ull << 30), d.cc_major, d.cc_minor,
                 cuda::sm_name(d));
  }
}
#else
int check(const std::string& spec) {
  throw knod::Error(fmt::format("{}: knod was built without CUDA headers", spec));
}
void list_cuda() {
  fmt::print("cuda      not built (no CUDA headers at build time)\n");
}
#endif

int list() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  fmt::print("cpu       {} cores (LLVM JIT; the default)\n", cores);
  fmt::print("interp    the reference interpreter\n");
  list_cuda();
  std::string gfx;
  for (const auto& g : knod::device::gpu::amdgcn_targets()) gfx += (gfx.empty() ? "" : ", ") + g;
  fmt::print("amdgpu    code objects only ({} via `knod jit --target`; no runtime yet)\n", gfx);
  fmt::print("gpusim    the GPU runtime and batch kernel run on the host, lane by lane (tests)\n");
  return 0;
}

}  // namespace

KNOD_COMMAND(devices) {
  auto* c = app.add_subcommand("devices", "List the devices knod can run programs on");
  auto spec = std::make_shared<std::string>();
  c->add_option("--device", *spec, "Open this device (cuda, cuda:N) and report whether it works");
  c->callback([set_action, spec] {
    set_action([spec] { return spec->empty() || *spec == "cpu" ? list() : check(*spec); });
  });
}
