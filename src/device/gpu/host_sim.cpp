// The host-simulated GPU (see host_sim.h).
#include "device/gpu/host_sim.h"

#include <fmt/core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "device/gpu/codegen.h"
#include "device/gpu/gpu_abi.h"
#include "device/gpu/mailbox_ring.h"
#include "device/gpu/map_image.h"
#include "device/gpu/program.h"

namespace knod::device::gpu {
struct SimSession;
}

namespace {
thread_local uint32_t t_lane = 0;  // the lane the simulator runs now (global_id())
// Persistent kernel threads: the simulated block this thread is, of how many, its session.
thread_local uint32_t t_block = 0, t_nblocks = 1;
thread_local knod::device::gpu::SimSession* t_session = nullptr;
}  // namespace

extern "C" uint32_t knod_sim_global_id() {
  return t_lane;
}
extern "C" uint32_t knod_sim_block_id() {
  return t_block;
}
extern "C" uint32_t knod_sim_nblocks() {
  return t_nblocks;
}
extern "C" void knod_sim_pause() {
  std::this_thread::yield();
}
extern "C" void knod_sim_lane_begin(uint32_t slot, uint32_t i);
extern "C" void knod_sim_lane_end(uint32_t slot, uint32_t i);
extern "C" uint64_t knod_sim_now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

namespace knod::device::gpu {

using KernelFn = void (*)(const knod_gpu_args*);
using PersistentFn = void (*)(knod_gpu_mailbox*);

/// A persistent session: the mailbox in host memory, one host thread per simulated block
/// running knod_xdp_persistent. Packets run in session order (packet i of batch s after every
/// packet before it: lane_begin/lane_end), so results equal the CPU's packet-by-packet run;
/// polling, block counters and DONE marking run concurrently on the threads.
struct SimSession {
  knod_gpu_mailbox mb{};
  uint32_t block_done[KNOD_GPU_MAILBOX_DEPTH] = {};
  std::vector<uint64_t> ret[KNOD_GPU_MAILBOX_DEPTH];
  uint64_t base[KNOD_GPU_MAILBOX_DEPTH] = {};  // session ordinal of packet 0 of the slot
  uint64_t submitted = 0;                      // packets posted so far
  std::atomic<uint64_t> turn{0};               // ordinal of the packet allowed to run
  std::vector<std::thread> threads;
  std::unique_ptr<MailboxRing> ring;
  PersistentOptions opts;
};

struct HostSim::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  KernelFn kernel = nullptr;
  Mode mode = Mode::kXdp;
  uint32_t entry = 0, ncpus = 0;
  uint64_t clock_ns = 0, seed = 0;
  std::vector<maps::MapPtr> maps;
  std::vector<std::vector<uint8_t>> images;  // the "device memory" of each map
  std::vector<knod_gpu_map*> table;
  std::vector<uint64_t> ret;
  PersistentFn persistent = nullptr;
  std::unique_ptr<SimSession> session;

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

}  // namespace knod::device::gpu

// Packet i of the batch in `slot` waits for its turn in the session's order.
extern "C" void knod_sim_lane_begin(uint32_t slot, uint32_t i) {
  knod::device::gpu::SimSession& S = *t_session;
  const uint64_t me = S.base[slot] + i;
  while (S.turn.load(std::memory_order_acquire) != me) std::this_thread::yield();
}
extern "C" void knod_sim_lane_end(uint32_t, uint32_t) {
  t_session->turn.fetch_add(1, std::memory_order_release);
}

namespace knod::device::gpu {

HostSim::HostSim() : impl_(std::make_unique<Impl>()) {}
HostSim::~HostSim() {
  try {
    stop();
  } catch (...) {  // a destructor does not throw; stop() only throws for a broken ring
  }
}

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
  def("knod_sim_block_id", &knod_sim_block_id);
  def("knod_sim_nblocks", &knod_sim_nblocks);
  def("knod_sim_pause", &knod_sim_pause);
  def("knod_sim_lane_begin", &knod_sim_lane_begin);
  def("knod_sim_lane_end", &knod_sim_lane_end);
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
  if (im.session) throw Error("gpusim: load() during a persistent session");
  im.kernel = nullptr;
  im.persistent = nullptr;
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
  auto psym = im.jit->lookup(kPersistentKernelName);
  if (!psym) throw Error("gpusim: " + llvm::toString(psym.takeError()));
  im.persistent = psym->toPtr<PersistentFn>();
}

void HostSim::run(Batch& b) {
  Impl& im = *impl_;
  if (!im.kernel) throw Error("gpusim: no program loaded");
  if (im.session) throw Error("gpusim: run() during a persistent session (use submit)");
  if (b.count == 0) return;
  require_frame_per_slot(b, "gpusim");
  im.ret.assign(b.count, 0);
  knod_gpu_args a = args_for(b, im.ret.data());
  im.upload_maps();
  for (uint32_t i = 0; i < a.lanes; ++i) {
    t_lane = i;
    im.kernel(&a);
  }
  im.download_maps();
}

knod_gpu_args HostSim::args_for(Batch& b, uint64_t* ret) const {
  const Impl& im = *impl_;
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
  a.ret = ret;
  a.maps = const_cast<knod_gpu_map**>(im.table.data());
  a.clock_ns = im.clock_ns;
  a.seed = im.seed;
  a.insn_budget = vm::kDefaultInsnBudget;  // as the CUDA device
  a.ncpus = im.ncpus;
  a.entry = im.entry;
  a.lanes = lanes_for(b.count, im.ncpus);
  return a;
}

void HostSim::start_persistent(const PersistentOptions& opts) {
  Impl& im = *impl_;
  if (!im.persistent) throw Error("gpusim: no program loaded");
  if (im.session) throw Error("gpusim: a persistent session is already running");
  auto ss = std::make_unique<SimSession>();
  SimSession& S = *ss;
  S.opts = opts;
  const uint32_t nblocks = opts.blocks ? opts.blocks : 3;
  S.mb.block_done = S.block_done;
  S.mb.nblocks = nblocks;
  im.upload_maps();  // on the "device" until stop()
  MailboxRing::Hooks h;
  h.stage = [this, &S](uint32_t slot, Batch& b) {
    if (b.count > S.opts.max_batch || (b.count && b.stride != S.opts.stride))
      throw Error("gpusim: batch larger than max_batch or with another stride");
    require_frame_per_slot(b, "gpusim");
    S.ret[slot].assign(b.count, 0);
    S.base[slot] = S.submitted;
    S.submitted += b.count;
    return args_for(b, S.ret[slot].data());  // zero copy: lanes run on b's arrays
  };
  h.unstage = [](uint32_t, Batch&) {};
  h.check_alive = [] {};  // the threads only return on EXIT
  S.ring = std::make_unique<MailboxRing>(&S.mb, std::move(h));
  PersistentFn fn = im.persistent;
  for (uint32_t blk = 0; blk < nblocks; ++blk)
    S.threads.emplace_back([&S, fn, blk, nblocks] {
      t_session = &S;
      t_block = blk;
      t_nblocks = nblocks;
      fn(&S.mb);
    });
  im.session = std::move(ss);
}

uint64_t HostSim::submit(Batch& b) {
  if (!impl_->session) throw Error("gpusim: submit() without a persistent session");
  return impl_->session->ring->submit(b);
}

std::optional<uint64_t> HostSim::complete() {
  if (!impl_->session) throw Error("gpusim: complete() without a persistent session");
  return impl_->session->ring->complete();
}

void HostSim::stop() {
  Impl& im = *impl_;
  if (!im.session) return;
  SimSession& S = *im.session;
  S.ring->drain();
  S.ring->post_exit();
  for (auto& t : S.threads) t.join();
  im.session.reset();
  im.download_maps();
}

bool HostSim::persistent() const {
  return impl_->session != nullptr;
}

uint64_t HostSim::run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) {
  run_single(mem, fault);
  return impl_->ret[0];
}

}  // namespace knod::device::gpu
