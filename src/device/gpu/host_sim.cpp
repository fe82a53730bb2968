// The host-simulated GPU (see host_sim.h).
#include "device/gpu/host_sim.h"

#include <fmt/core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <cstring>

#include "base/error.h"
#include "device/gpu/codegen.h"
#include "device/gpu/gpu_abi.h"
#include "device/gpu/map_image.h"
#include "device/gpu/program.h"

namespace {
thread_local uint32_t t_lane = 0;  // the lane the simulator runs now (global_id())
}  // namespace

extern "C" uint32_t knod_sim_global_id() {
  return t_lane;
}
extern "C" uint64_t knod_sim_now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

namespace knod::device::gpu {

using KernelFn = void (*)(const knod_gpu_args*);

struct HostSim::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  KernelFn kernel = nullptr;
  Mode mode = Mode::kXdp;
  uint32_t entry = 0, ncpus = 1;
  uint64_t clock_ns = 0, seed = 0;
  std::vector<maps::MapPtr> maps;
  std::vector<std::vector<uint8_t>> images;  // the "device memory" of each map
  std::vector<knod_gpu_map*> table;
  std::vector<uint64_t> ret;

  void upload_maps() {
    for (size_t i = 0; i < maps.size(); ++i) {
      std::vector<uint8_t> img = build_map_image(*maps[i], "gpusim");
      if (img.size() != images[i].size()) throw Error("gpusim: a map image changed size");
      std::memcpy(images[i].data(), img.data(), img.size());
    }
  }
  void download_maps() {
    for (size_t i = 0; i < maps.size(); ++i) write_back_map_image(*maps[i], images[i]);
  }
};

HostSim::HostSim() : impl_(std::make_unique<Impl>()) {}
HostSim::~HostSim() = default;

namespace {

std::unique_ptr<llvm::orc::LLJIT> make_jit() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("gpusim: " + llvm::toString(jtmb.takeError()));
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) throw Error("gpusim: " + llvm::toString(jit.takeError()));
  llvm::orc::SymbolMap host;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  auto def = [&](const char* name, auto* fn) {
    host[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), flags};
  };
  def("knod_sim_global_id", &knod_sim_global_id);
  def("knod_sim_now_ns", &knod_sim_now_ns);
  def("memset", &::memset);
  def("memcpy", &::memcpy);
  def("memmove", &::memmove);
  if (auto err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(host))))
    throw Error("gpusim: " + llvm::toString(std::move(err)));
  return std::move(*jit);
}

}  // namespace

void HostSim::load(const vm::Env& env, size_t entry, Mode mode) {
  Impl& im = *impl_;
  if (entry >= env.programs.size()) throw Error("gpusim: no entry program");
  im.kernel = nullptr;
  im.mode = mode;
  im.entry = uint32_t(entry);
  im.clock_ns = env.clock_ns;
  im.seed = env.seed;
  im.maps = env.maps;
  im.images.clear();
  im.table.clear();
  for (auto& m : im.maps) {
    im.images.push_back(build_map_image(*m, "gpusim"));
    im.table.push_back(reinterpret_cast<knod_gpu_map*>(im.images.back().data()));
  }
  im.ncpus = percpu_slots(im.images);
  // As the CUDA device: host values of ld_imm64 become the images' addresses.
  auto relocate = [&](uint64_t v) -> uint64_t {
    for (size_t i = 0; i < im.maps.size(); ++i) {
      uint64_t dev = reinterpret_cast<uint64_t>(im.images[i].data());
      if (v == reinterpret_cast<uint64_t>(im.maps[i].get())) return dev;
      for (const auto& pool : im.maps[i]->value_pools()) {
        uint64_t b = reinterpret_cast<uint64_t>(pool.base);
        if (v >= b && v < b + pool.bytes)
          return dev + map_header(im.images[i]).values_off + (v - b);
      }
    }
    return v;
  };
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::vector<std::string> names;
  auto m = lower_env(env, mode == Mode::kXdp ? jit::CtxKind::kXdp : jit::CtxKind::kOpaque, *ctx,
                     relocate, &names);
  prepare_module(*m, Target{Arch::kHostSim, "", "gpusim"}, names);
  im.jit = make_jit();
  m->setDataLayout(im.jit->getDataLayout());
  if (auto err = im.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw Error("gpusim: " + llvm::toString(std::move(err)));
  auto sym = im.jit->lookup(kKernelName);
  if (!sym) throw Error("gpusim: " + llvm::toString(sym.takeError()));
  im.kernel = sym->toPtr<KernelFn>();
}

void HostSim::run(Batch& b) {
  Impl& im = *impl_;
  if (!im.kernel) throw Error("gpusim: no program loaded");
  if (b.count == 0) return;
  im.ret.assign(b.count, 0);
  knod_gpu_args a{};
  a.count = b.count;
  a.stride = b.stride;
  a.mode = im.mode == Mode::kRaw ? KNOD_GPU_MODE_RAW : KNOD_GPU_MODE_XDP;
  a.nmaps = uint32_t(im.table.size());
  a.frames = b.frames;
  a.data_off = b.data_off;
  a.data_len = b.data_len;
  a.meta_len = b.meta_len;
  a.ingress_ifindex = b.ingress_ifindex;
  a.rx_queue_index = b.rx_queue_index;
  a.verdict = b.verdict;
  a.redirect = b.redirect;
  a.fault = b.fault;
  a.ret = im.ret.data();
  a.maps = im.table.data();
  a.clock_ns = im.clock_ns;
  a.seed = im.seed;
  a.insn_budget = 1'000'000;  // as the CUDA device
  a.ncpus = im.ncpus;
  a.entry = im.entry;
  im.upload_maps();
  for (uint32_t i = 0; i < b.count; ++i) {
    t_lane = i;
    im.kernel(&a);
  }
  im.download_maps();
}

uint64_t HostSim::run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) {
  run_single(mem, fault);
  return impl_->ret[0];
}

}  // namespace knod::device::gpu
