// The CUDA device (see device.h): driver calls through the dlopen'ed Driver table.
#include "device/cuda/device.h"

#include <fmt/core.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "device/cuda/driver.h"
#include "device/cuda/map_image.h"
#include "device/cuda/ptx.h"
#include "device/gpu/codegen.h"
#include "device/gpu/gpu_abi.h"
#include "device/gpu/mailbox_ring.h"
#include "device/gpu/program.h"
#include "jit/lower.h"

namespace knod::device::cuda {
namespace {

constexpr uint32_t kThreads = 256;    // threads per block
constexpr uint32_t kChunks = 4;       // batch chunks, alternating between the two streams
constexpr uint32_t kMinChunk = 4096;  // packets; smaller batches run as one chunk

// Per-packet arrays, in this order, in both the pinned staging block and device memory.
struct Arrays {
  uint64_t frames, data_off, data_len, meta_len, ifindex, rxq, verdict, redirect, fault, ret, end;
};
Arrays layout(uint32_t cap, uint32_t stride) {
  Arrays a{};
  uint64_t o = 0;
  auto take = [&](uint64_t bytes) {
    uint64_t at = o;
    o = (o + bytes + 255) & ~uint64_t(255);
    return at;
  };
  a.frames = take(uint64_t(cap) * stride);
  a.data_off = take(4ull * cap);
  a.data_len = take(4ull * cap);
  a.meta_len = take(4ull * cap);
  a.ifindex = take(4ull * cap);
  a.rxq = take(4ull * cap);
  a.verdict = take(4ull * cap);
  a.redirect = take(8ull * cap);
  a.fault = take(1ull * cap);
  a.ret = take(8ull * cap);
  a.end = o;
  return a;
}

// Batch `b` into the arrays laid out as `L` at `P` (host memory); defaults as test_run.
void stage_in(uint8_t* P, const Arrays& L, const Batch& b) {
  std::memcpy(P + L.frames, b.frames, uint64_t(b.count) * b.stride);
  std::memcpy(P + L.data_off, b.data_off, 4ull * b.count);
  std::memcpy(P + L.data_len, b.data_len, 4ull * b.count);
  if (b.meta_len)
    std::memcpy(P + L.meta_len, b.meta_len, 4ull * b.count);
  else
    std::memset(P + L.meta_len, 0, 4ull * b.count);
  if (b.ingress_ifindex)
    std::memcpy(P + L.ifindex, b.ingress_ifindex, 4ull * b.count);
  else  // loopback, as test_run
    std::fill_n(reinterpret_cast<uint32_t*>(P + L.ifindex), b.count, 1u);
  if (b.rx_queue_index)
    std::memcpy(P + L.rxq, b.rx_queue_index, 4ull * b.count);
  else
    std::memset(P + L.rxq, 0, 4ull * b.count);
}

// The results in the arrays at `P` back into `b`.
void stage_out(const uint8_t* P, const Arrays& L, Batch& b) {
  std::memcpy(b.frames, P + L.frames, uint64_t(b.count) * b.stride);
  std::memcpy(b.data_off, P + L.data_off, 4ull * b.count);
  std::memcpy(b.data_len, P + L.data_len, 4ull * b.count);
  if (b.meta_len) std::memcpy(b.meta_len, P + L.meta_len, 4ull * b.count);
  std::memcpy(b.verdict, P + L.verdict, 4ull * b.count);
  std::memcpy(b.redirect, P + L.redirect, 8ull * b.count);
  std::memcpy(b.fault, P + L.fault, b.count);
}

// A persistent session: the mailbox and one staging area per ring slot in mapped pinned host
// memory (the kernel reads and writes them over the bus), block counters in device memory,
// the persistent kernel on its own stream.
struct PersistentSession {
  gpu::PersistentOptions opts;
  uint32_t nblocks = 0;
  knod_gpu_mailbox* mb = nullptr;  // host view
  CUdeviceptr dmb = 0, dcounters = 0;
  CUstream stream = nullptr;
  Arrays lay{};
  uint8_t* host[KNOD_GPU_MAILBOX_DEPTH] = {};
  CUdeviceptr dev[KNOD_GPU_MAILBOX_DEPTH] = {};
  std::unique_ptr<gpu::MailboxRing> ring;
  bool launched = false;
};

}  // namespace

struct Device::Impl {
  const Driver* d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  CUfunction pfn = nullptr;  // the persistent kernel
  std::unique_ptr<PersistentSession> ps;
  CUstream stream[2] = {};
  CUevent ev_start = nullptr, ev_end = nullptr, ev_k0[kChunks] = {}, ev_k1[kChunks] = {};
  Mode mode = Mode::kXdp;
  uint32_t entry = 0, ncpus = 0;
  // maps
  std::vector<maps::MapPtr> maps;
  std::vector<std::vector<uint8_t>> images;
  std::vector<CUdeviceptr> dmaps;
  CUdeviceptr dmap_table = 0;
  // packets
  uint32_t cap = 0, stride = 0;
  Arrays lay{};
  CUdeviceptr dbuf = 0, dargs = 0;
  uint8_t* pinned = nullptr;
  knod_gpu_args* pinned_args = nullptr;
  uint32_t last_count = 0;
  uint64_t clock_ns = 0, seed = 0;  // vm::Env: pinned clock, prandom seed

  void current() const { d->check(d->cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }

  void free_buffers() {
    if (dbuf) d->cuMemFree(dbuf);
    if (pinned) d->cuMemFreeHost(pinned);
    dbuf = 0;
    pinned = nullptr;
    cap = 0;
  }

  void reserve(uint32_t count, uint32_t new_stride) {
    if (count <= cap && new_stride == stride) return;
    free_buffers();
    cap = std::max<uint32_t>(count, 1024);
    stride = new_stride;
    lay = layout(cap, stride);
    d->check(d->cuMemAlloc(&dbuf, lay.end), "cuMemAlloc (packets)");
    void* p = nullptr;
    d->check(d->cuMemHostAlloc(&p, lay.end, 0), "cuMemHostAlloc (pinned staging)");
    pinned = static_cast<uint8_t*>(p);
  }

  knod_gpu_args args_for(uint32_t first, uint32_t count) const {
    return args_in(dbuf, lay, stride, first, count);
  }
  // Args of packets [first, first + count) of the arrays laid out as `L` at device address
  // `buf` with `slot_stride` bytes per frame.
  knod_gpu_args args_in(CUdeviceptr buf, const Arrays& L, uint32_t slot_stride, uint32_t first,
                        uint32_t count) const {
    knod_gpu_args a{};
    a.count = count;
    a.stride = slot_stride;
    a.mode = mode == Mode::kRaw ? KNOD_GPU_MODE_RAW : KNOD_GPU_MODE_XDP;
    a.nmaps = uint32_t(dmaps.size());
    auto at = [&](uint64_t off, uint64_t elem) { return buf + off + uint64_t(first) * elem; };
    a.frames = reinterpret_cast<uint8_t*>(at(L.frames, slot_stride));
    a.data_off = reinterpret_cast<uint32_t*>(at(L.data_off, 4));
    a.data_len = reinterpret_cast<uint32_t*>(at(L.data_len, 4));
    a.meta_len = reinterpret_cast<uint32_t*>(at(L.meta_len, 4));
    a.ingress_ifindex = reinterpret_cast<uint32_t*>(at(L.ifindex, 4));
    a.rx_queue_index = reinterpret_cast<uint32_t*>(at(L.rxq, 4));
    a.verdict = reinterpret_cast<uint32_t*>(at(L.verdict, 4));
    a.redirect = reinterpret_cast<uint64_t*>(at(L.redirect, 8));
    a.fault = reinterpret_cast<uint8_t*>(at(L.fault, 1));
    a.ret = reinterpret_cast<uint64_t*>(at(L.ret, 8));
    a.maps = reinterpret_cast<knod_gpu_map**>(dmap_table);
    a.insn_budget = vm::kDefaultInsnBudget;
    a.clock_ns = clock_ns;
    a.seed = seed;
    a.ncpus = ncpus;
    a.entry = entry;
    a.lanes = gpu::lanes_for(a.count, ncpus);
    return a;
  }

  // Maps stay in device memory across batches: images[i] is what the device holds
  // (resident[i]); a map is copied up again only when the host's image differs (the host
  // changed it, or a HASH map is compacted after device deletes).
  std::vector<bool> resident;
  void upload_maps() {
    resident.resize(maps.size(), false);
    for (size_t i = 0; i < maps.size(); ++i) {
      std::vector<uint8_t> img = build_map_image(*maps[i]);
      if (resident[i] && img == images[i]) continue;
      images[i] = std::move(img);
      d->check(d->cuMemcpyHtoD(dmaps[i], images[i].data(), images[i].size()), "cuMemcpyHtoD (map)");
      resident[i] = true;
    }
  }
  void download_maps() {
    for (size_t i = 0; i < maps.size(); ++i) {
      d->check(d->cuMemcpyDtoH(images[i].data(), dmaps[i], images[i].size()), "cuMemcpyDtoH (map)");
      write_back_map_image(*maps[i], images[i]);
    }
  }

  void launch(uint32_t c, CUstream s, uint32_t count) {
    CUdeviceptr a = dargs + c * sizeof(knod_gpu_args);
    void* params[] = {&a};
    uint32_t blocks = (gpu::lanes_for(count, ncpus) + kThreads - 1) / kThreads;
    d->check(d->cuEventRecord(ev_k0[c], s), "cuEventRecord");
    d->check(d->cuLaunchKernel(fn, blocks, 1, 1, kThreads, 1, 1, 0, s, params, nullptr),
             "cuLaunchKernel");
    d->check(d->cuEventRecord(ev_k1[c], s), "cuEventRecord");
  }
};

std::unique_ptr<Device> Device::open(std::string_view spec) {
  int ordinal = parse_device_name(spec);
  if (ordinal < 0) throw Error(fmt::format("'{}' is not a CUDA device (cuda or cuda:N)", spec));
  DeviceInfo info = open_device_info(ordinal);  // driver and ordinal errors
  std::unique_ptr<Device> dev(new Device(info));
  Impl& im = *dev->impl_;
  im.d = &Driver::get();
  const Driver& d = *im.d;
  d.check(d.cuDeviceGet(&im.dev, ordinal), "cuDeviceGet");
  d.check(d.cuDevicePrimaryCtxRetain(&im.ctx, im.dev), "cuDevicePrimaryCtxRetain");
  im.current();
  // Per-thread stack: the program's frames ([kMaxCallDepth x 512] B buffer per program run),
  // one more for each nested tail call, plus the runtime's. Largest the GPU grants.
  for (size_t bytes : {size_t(64) << 10, size_t(32) << 10, size_t(16) << 10})
    if (d.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, bytes) == CUDA_SUCCESS) break;
  for (auto& s : im.stream) d.check(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  d.check(d.cuEventCreate(&im.ev_start, CU_EVENT_DEFAULT), "cuEventCreate");
  d.check(d.cuEventCreate(&im.ev_end, CU_EVENT_DEFAULT), "cuEventCreate");
  for (uint32_t c = 0; c < kChunks; ++c) {
    d.check(d.cuEventCreate(&im.ev_k0[c], CU_EVENT_DEFAULT), "cuEventCreate");
    d.check(d.cuEventCreate(&im.ev_k1[c], CU_EVENT_DEFAULT), "cuEventCreate");
  }
  d.check(d.cuMemAlloc(&im.dargs, kChunks * sizeof(knod_gpu_args)), "cuMemAlloc (args)");
  void* p = nullptr;
  d.check(d.cuMemHostAlloc(&p, kChunks * sizeof(knod_gpu_args), 0), "cuMemHostAlloc (args)");
  im.pinned_args = static_cast<knod_gpu_args*>(p);
  return dev;
}

Device::Device(const DeviceInfo& info) : info_(info), impl_(std::make_unique<Impl>()) {}

Device::~Device() {
  Impl& im = *impl_;
  if (!im.d || !im.ctx) return;
  try {
    stop();
  } catch (...) {  // a destructor does not throw; the session's memory is freed by stop()
  }
  const Driver& d = *im.d;
  d.cuCtxSetCurrent(im.ctx);
  d.cuCtxSynchronize();
  im.free_buffers();
  for (CUdeviceptr m : im.dmaps) d.cuMemFree(m);
  if (im.dmap_table) d.cuMemFree(im.dmap_table);
  if (im.dargs) d.cuMemFree(im.dargs);
  if (im.pinned_args) d.cuMemFreeHost(im.pinned_args);
  for (CUevent e : {im.ev_start, im.ev_end})
    if (e) d.cuEventDestroy(e);
  for (uint32_t c = 0; c < kChunks; ++c) {
    if (im.ev_k0[c]) d.cuEventDestroy(im.ev_k0[c]);
    if (im.ev_k1[c]) d.cuEventDestroy(im.ev_k1[c]);
  }
  for (CUstream s : im.stream)
    if (s) d.cuStreamDestroy(s);
  if (im.mod) d.cuModuleUnload(im.mod);
  d.cuDevicePrimaryCtxRelease(im.dev);
}

void Device::load(const vm::Env& env, size_t entry, Mode mode) {
  Impl& im = *impl_;
  const Driver& d = *im.d;
  im.current();
  if (entry >= env.programs.size()) throw Error("cuda: no entry program");
  if (im.ps) throw Error("cuda: load() during a persistent session");
  im.mode = mode;
  im.entry = uint32_t(entry);
  im.clock_ns = env.clock_ns;
  im.seed = env.seed;
  // Maps first: programs refer to them by device address. A previous load's go.
  for (CUdeviceptr m : im.dmaps) d.cuMemFree(m);
  if (im.dmap_table) d.cuMemFree(im.dmap_table);
  im.dmap_table = 0;
  im.maps = env.maps;
  im.images.assign(im.maps.size(), {});
  im.resident.assign(im.maps.size(), false);
  im.dmaps.assign(im.maps.size(), 0);
  for (size_t i = 0; i < im.maps.size(); ++i) {
    im.images[i] = build_map_image(*im.maps[i]);
    d.check(d.cuMemAlloc(&im.dmaps[i], im.images[i].size()), "cuMemAlloc (map)");
  }
  im.ncpus = gpu::percpu_slots(im.images);
  if (!im.dmaps.empty()) {
    d.check(d.cuMemAlloc(&im.dmap_table, im.dmaps.size() * sizeof(CUdeviceptr)), "cuMemAlloc");
    d.check(d.cuMemcpyHtoD(im.dmap_table, im.dmaps.data(), im.dmaps.size() * sizeof(CUdeviceptr)),
            "cuMemcpyHtoD");
  }
  // ld_imm64 values vm::prepare() made host addresses (maps::Map*, value pool pointers)
  // become the device's: the map header, or the same offset in the device value array.
  auto relocate = [&](uint64_t v) -> uint64_t {
    for (size_t i = 0; i < im.maps.size(); ++i) {
      if (v == reinterpret_cast<uint64_t>(im.maps[i].get())) return im.dmaps[i];
      const knod_gpu_map& h = map_header(im.images[i]);
      for (const auto& pool : im.maps[i]->value_pools()) {
        uint64_t b = reinterpret_cast<uint64_t>(pool.base);
        if (v >= b && v < b + pool.bytes) return im.dmaps[i] + h.values_off + (v - b);
      }
    }
    return v;
  };
  llvm::LLVMContext ctx;
  std::vector<std::string> names;
  auto all = gpu::lower_env(env, mode == Mode::kXdp ? jit::CtxKind::kXdp : jit::CtxKind::kOpaque,
                            ctx, relocate, &names);
  std::string ptx = compile_ptx(*all, sm_name(info_), names);
  if (im.mod) d.cuModuleUnload(im.mod);
  im.mod = nullptr;
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
  if (CUresult r = d.cuModuleLoadDataEx(&im.mod, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    throw Error(fmt::format("CUDA driver JIT rejected the PTX: {}: {}", d.error_string(r), log));
  d.check(d.cuModuleGetFunction(&im.fn, im.mod, gpu::kKernelName), "cuModuleGetFunction");
  d.check(d.cuModuleGetFunction(&im.pfn, im.mod, gpu::kPersistentKernelName),
          "cuModuleGetFunction (persistent)");
}

void Device::run(Batch& b) {
  Impl& im = *impl_;
  const Driver& d = *im.d;
  if (!im.fn) throw Error("cuda: no program loaded");
  if (im.ps) throw Error("cuda: run() during a persistent session (use submit)");
  im.current();
  if (b.count == 0) return;
  gpu::require_frame_per_slot(b, "cuda");
  im.reserve(b.count, b.stride);
  im.upload_maps();
  // Stage the batch in pinned memory (one CPU copy), then copy chunks asynchronously.
  const Arrays& L = im.lay;
  uint8_t* P = im.pinned;
  stage_in(P, L, b);

  uint32_t chunks = b.count >= kChunks * kMinChunk ? kChunks : 1;
  uint32_t per = (b.count + chunks - 1) / chunks;
  d.check(d.cuEventRecord(im.ev_start, im.stream[0]), "cuEventRecord");
  for (uint32_t c = 0; c < chunks; ++c) {
    uint32_t first = c * per, n = std::min(per, b.count - first);
    CUstream s = im.stream[c % 2];
    auto in = [&](uint64_t off, uint64_t elem) {
      d.check(
          d.cuMemcpyHtoDAsync(im.dbuf + off + first * elem, P + off + first * elem, n * elem, s),
          "cuMemcpyHtoDAsync");
    };
    in(L.frames, b.stride);
    for (uint64_t off : {L.data_off, L.data_len, L.meta_len, L.ifindex, L.rxq}) in(off, 4);
    im.pinned_args[c] = im.args_for(first, n);
    d.check(d.cuMemcpyHtoDAsync(im.dargs + c * sizeof(knod_gpu_args), &im.pinned_args[c],
                                sizeof(knod_gpu_args), s),
            "cuMemcpyHtoDAsync (args)");
    im.launch(c, s, n);
    auto out = [&](uint64_t off, uint64_t elem) {
      d.check(
          d.cuMemcpyDtoHAsync(P + off + first * elem, im.dbuf + off + first * elem, n * elem, s),
          "cuMemcpyDtoHAsync");
    };
    out(L.frames, b.stride);
    for (uint64_t off : {L.data_off, L.data_len, L.meta_len, L.verdict}) out(off, 4);
    out(L.redirect, 8);
    out(L.fault, 1);
  }
  for (CUstream s : im.stream) d.check(d.cuStreamSynchronize(s), "cuStreamSynchronize (batch)");
  d.check(d.cuEventRecord(im.ev_end, im.stream[0]), "cuEventRecord");
  d.check(d.cuEventSynchronize(im.ev_end), "cuEventSynchronize");
  float ms = 0;
  d.check(d.cuEventElapsedTime(&ms, im.ev_start, im.ev_end), "cuEventElapsedTime");
  timing_.total_ms = ms;
  timing_.kernel_ms = 0;
  for (uint32_t c = 0; c < chunks; ++c) {
    d.check(d.cuEventElapsedTime(&ms, im.ev_k0[c], im.ev_k1[c]), "cuEventElapsedTime");
    timing_.kernel_ms += ms;
  }
  im.download_maps();
  stage_out(P, L, b);
  im.last_count = b.count;
}

void Device::run_resident(uint32_t count) {
  Impl& im = *impl_;
  const Driver& d = *im.d;
  if (!im.fn || count > im.last_count) throw Error("cuda: run_resident needs a previous run()");
  if (im.ps) throw Error("cuda: run_resident() during a persistent session");
  im.current();
  im.pinned_args[0] = im.args_for(0, count);
  d.check(d.cuMemcpyHtoDAsync(im.dargs, &im.pinned_args[0], sizeof(knod_gpu_args), im.stream[0]),
          "cuMemcpyHtoDAsync (args)");
  d.check(d.cuEventRecord(im.ev_start, im.stream[0]), "cuEventRecord");
  im.launch(0, im.stream[0], count);
  d.check(d.cuEventRecord(im.ev_end, im.stream[0]), "cuEventRecord");
  d.check(d.cuEventSynchronize(im.ev_end), "cuEventSynchronize");
  float ms = 0;
  d.check(d.cuEventElapsedTime(&ms, im.ev_start, im.ev_end), "cuEventElapsedTime");
  timing_.total_ms = timing_.kernel_ms = ms;
}

uint64_t Device::run_raw(std::vector<uint8_t>& mem, vm::Fault* fault) {
  Impl& im = *impl_;
  run_single(mem, fault);
  uint64_t r0 = 0;
  im.d->check(im.d->cuMemcpyDtoH(&r0, im.dbuf + im.lay.ret, 8), "cuMemcpyDtoH (r0)");
  return r0;
}

namespace {

// Frees what a session holds (no throw: also the error path of start/stop).
void free_session(const Driver& d, PersistentSession& S) {
  if (S.stream) d.cuStreamDestroy(S.stream);
  for (uint32_t k = 0; k < KNOD_GPU_MAILBOX_DEPTH; ++k)
    if (S.host[k]) d.cuMemFreeHost(S.host[k]);
  if (S.mb) d.cuMemFreeHost(S.mb);
  if (S.dcounters) d.cuMemFree(S.dcounters);
  S = PersistentSession{};
}

}  // namespace

void Device::start_persistent(const gpu::PersistentOptions& opts) {
  Impl& im = *impl_;
  const Driver& d = *im.d;
  if (!im.pfn) throw Error("cuda: no program loaded");
  if (im.ps) throw Error("cuda: a persistent session is already running");
  if (opts.max_batch == 0 || opts.stride <= kTailroom)
    throw Error("cuda: persistent mode needs max_batch >= 1 and a stride over the tailroom");
  im.current();
  // Every block must be resident at once: blocks never wait for each other, but the slot
  // is DONE only when all of them have run it.
  int per_sm = 0;
  d.check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, im.pfn, int(kThreads), 0),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  const uint32_t resident = uint32_t(std::max(per_sm, 0)) * uint32_t(info_.sms);
  if (resident == 0) throw Error("cuda: the persistent kernel cannot be resident on this GPU");
  // Default: one block per SM, leaving room on each SM for other kernels of the process
  // (e.g. the CUDA ESP engine of `knod run --xfrm`) while the session holds the GPU.
  const uint32_t nblocks = opts.blocks ? opts.blocks : uint32_t(info_.sms);
  if (nblocks > resident)
    throw Error(fmt::format("cuda: {} persistent blocks do not fit ({} resident at most)", nblocks,
                            resident));
  auto ps = std::make_unique<PersistentSession>();
  PersistentSession& S = *ps;
  S.opts = opts;
  S.nblocks = nblocks;
  try {
    im.upload_maps();  // on the device until stop()
    const unsigned mapped = CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE;
    void* p = nullptr;
    d.check(d.cuMemHostAlloc(&p, sizeof(knod_gpu_mailbox), mapped), "cuMemHostAlloc (mailbox)");
    S.mb = static_cast<knod_gpu_mailbox*>(p);
    std::memset(S.mb, 0, sizeof(knod_gpu_mailbox));  // every slot FREE
    d.check(d.cuMemHostGetDevicePointer(&S.dmb, S.mb, 0), "cuMemHostGetDevicePointer (mailbox)");
    d.check(d.cuMemAlloc(&S.dcounters, KNOD_GPU_MAILBOX_DEPTH * sizeof(uint32_t)),
            "cuMemAlloc (block counters)");
    d.check(d.cuMemsetD8(S.dcounters, 0, KNOD_GPU_MAILBOX_DEPTH * sizeof(uint32_t)),
            "cuMemsetD8 (block counters)");
    S.mb->block_done = reinterpret_cast<uint32_t*>(S.dcounters);
    S.mb->nblocks = nblocks;
    S.lay = layout(opts.max_batch, opts.stride);
    for (uint32_t k = 0; k < KNOD_GPU_MAILBOX_DEPTH; ++k) {
      d.check(d.cuMemHostAlloc(&p, S.lay.end, mapped), "cuMemHostAlloc (batch slot)");
      S.host[k] = static_cast<uint8_t*>(p);
      d.check(d.cuMemHostGetDevicePointer(&S.dev[k], p, 0), "cuMemHostGetDevicePointer (batch)");
    }
    d.check(d.cuStreamCreate(&S.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate (persistent)");
    gpu::MailboxRing::Hooks h;
    h.stage = [&im, &S](uint32_t k, Batch& b) {
      if (b.count > S.opts.max_batch || (b.count && b.stride != S.opts.stride))
        throw Error("cuda: batch larger than max_batch or with another stride");
      gpu::require_frame_per_slot(b, "cuda");
      if (b.count) stage_in(S.host[k], S.lay, b);
      return im.args_in(S.dev[k], S.lay, S.opts.stride, 0, b.count);
    };
    h.unstage = [&S](uint32_t k, Batch& b) {
      if (b.count) stage_out(S.host[k], S.lay, b);
    };
    h.check_alive = [&d, &S] {
      CUresult r = d.cuStreamQuery(S.stream);
      if (r == CUDA_ERROR_NOT_READY) return;
      if (r == CUDA_SUCCESS) throw Error("cuda: the persistent kernel ended before EXIT");
      d.check(r, "persistent kernel");
    };
    S.ring = std::make_unique<gpu::MailboxRing>(S.mb, std::move(h));
    void* params[] = {&S.dmb};
    d.check(d.cuLaunchKernel(im.pfn, nblocks, 1, 1, kThreads, 1, 1, 0, S.stream, params, nullptr),
            "cuLaunchKernel (persistent)");
    S.launched = true;
  } catch (...) {
    free_session(d, S);
    throw;
  }
  im.ps = std::move(ps);
}

uint64_t Device::submit(Batch& b) {
  Impl& im = *impl_;
  if (!im.ps) throw Error("cuda: submit() without a persistent session");
  return im.ps->ring->submit(b);
}

std::optional<uint64_t> Device::complete() {
  Impl& im = *impl_;
  if (!im.ps) throw Error("cuda: complete() without a persistent session");
  return im.ps->ring->complete();
}

void Device::stop() {
  Impl& im = *impl_;
  if (!im.ps) return;
  const Driver& d = *im.d;
  im.current();
  std::unique_ptr<PersistentSession> ps = std::move(im.ps);
  PersistentSession& S = *ps;
  try {
    S.ring->drain();
    S.ring->post_exit();
    d.check(d.cuStreamSynchronize(S.stream), "persistent kernel");
  } catch (...) {
    free_session(d, S);  // a kernel that failed or hangs: its memory is not freed here
    throw;
  }
  free_session(d, S);
  im.download_maps();
}

bool Device::persistent() const {
  return impl_->ps != nullptr;
}

}  // namespace knod::device::cuda
