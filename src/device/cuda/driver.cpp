// Loads libcuda.so.1 with dlopen and resolves the entry points in driver_fns.def.
#include "device/cuda/driver.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <mutex>

#include "base/error.h"

namespace knod::device::cuda {
namespace {

#define KNOD_CU_STR(x) #x
#define KNOD_CU_XSTR(x) KNOD_CU_STR(x)

struct Loaded {
  Driver drv;
  std::string why;  // empty when drv is usable
};

Loaded load() {
  Loaded l;
  // KNOD_LIBCUDA lets tests point at another file (or a missing one) instead of the driver.
  const char* path = getenv("KNOD_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    l.why = fmt::format("no NVIDIA driver ({} not found)", path);
    return l;
  }
#define KNOD_CU_FN(name)                                                              \
  l.drv.name = reinterpret_cast<decltype(l.drv.name)>(dlsym(h, KNOD_CU_XSTR(name)));  \
  if (!l.drv.name) {                                                                  \
    l.why = fmt::format("NVIDIA driver {} too old: no {}", path, KNOD_CU_XSTR(name)); \
    return l;                                                                         \
  }
#include "device/cuda/driver_fns.def"
#undef KNOD_CU_FN
  // h stays open for the life of the process: the driver cannot be unloaded safely.
  if (CUresult r = l.drv.cuInit(0); r != CUDA_SUCCESS)
    l.why = fmt::format("CUDA driver: cuInit failed: {}", l.drv.error_string(r));
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Driver* Driver::try_get(std::string* why) {
  const Loaded& l = loaded();
  if (!l.why.empty()) {
    if (why) *why = l.why;
    return nullptr;
  }
  return &l.drv;
}

const Driver& Driver::get() {
  std::string why;
  const Driver* d = try_get(&why);
  if (!d) throw Error(why);
  return *d;
}

std::string Driver::error_string(CUresult r) const {
  const char* s = nullptr;
  if (cuGetErrorString && cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

void Driver::check(CUresult r, const char* what) const {
  if (r != CUDA_SUCCESS) throw Error(fmt::format("CUDA {}: {}", what, error_string(r)));
}

}  // namespace knod::device::cuda
