// vm::Executor over a BatchDevice (see batch_executor.h).
#include "device/gpu/batch_executor.h"

#include <cstring>

#include "base/error.h"

namespace knod::device::gpu {

uint64_t BatchExecutor::run(vm::Run& run, const vm::Program& prog, uint64_t r1, uint64_t r2) {
  vm::Env env;
  if (run.env) {
    env.maps = run.env->maps;
    env.clock_ns = run.env->clock_ns;
    env.seed = run.env->seed;
  }
  env.programs.push_back(&prog);
  dev_.load(env, 0, Mode::kRaw);
  std::vector<uint8_t> mem;
  if (r1) {
    bool known = false;
    for (uint32_t i = 0; i < run.nregions; ++i)
      known |= run.regions[i].lo == r1 && run.regions[i].hi - r1 == r2;
    if (!known) throw Error("gpu batch executor: r1 must be the start of a run region of r2 bytes");
    mem.assign(reinterpret_cast<const uint8_t*>(r1), reinterpret_cast<const uint8_t*>(r1) + r2);
  }
  vm::Fault f = vm::Fault::kNone;
  uint64_t r0 = dev_.run_raw(mem, &f);
  if (r1 && !mem.empty()) std::memcpy(reinterpret_cast<void*>(r1), mem.data(), mem.size());
  run.fault = f;
  return f == vm::Fault::kNone ? r0 : 0;
}

}  // namespace knod::device::gpu
