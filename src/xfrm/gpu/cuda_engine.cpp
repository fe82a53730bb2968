// CudaEngine (see cuda_engine.h): driver calls through device/cuda's dlopen'ed Driver.
#include "xfrm/gpu/cuda_engine.h"

#include <fmt/core.h>

#include <cstring>

#include "base/error.h"
#include "device/cuda/devices.h"
#include "device/cuda/driver.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::xfrm::gpu {
namespace {

constexpr uint32_t kThreads = 128;  // threads per block (one packet or op each)

/// A device allocation that grows (never shrinks) to the largest batch seen.
struct DevBuf {
  CUdeviceptr p = 0;
  size_t cap = 0;
};

}  // namespace

struct CudaEngine::Impl {
  const device::cuda::Driver* d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction f_esp_enc = nullptr, f_esp_dec = nullptr, f_aead_enc = nullptr;
  std::vector<DevSa> sas;
  std::vector<uint8_t> icv_len;
  DevBuf dsas, dbuf, dops, dok, doff, dlen, dsa, dseq, ddrop;
  std::vector<uint8_t> buf, ok;
  std::vector<DevOp> ops;
  std::vector<uint64_t> seq;

  void ensure(DevBuf& b, size_t bytes, const char* what) {
    if (b.cap >= bytes) return;
    if (b.p) d->cuMemFree(b.p);
    b.p = 0, b.cap = 0;
    d->check(d->cuMemAlloc(&b.p, bytes), what);
    b.cap = bytes;
  }
  void put(DevBuf& b, const void* src, size_t bytes, const char* what) {
    ensure(b, bytes ? bytes : 1, what);
    if (bytes) d->check(d->cuMemcpyHtoD(b.p, src, bytes), what);
  }
  void get(void* dst, const DevBuf& b, size_t bytes, const char* what) {
    if (bytes) d->check(d->cuMemcpyDtoH(dst, b.p, bytes), what);
  }
  void launch(CUfunction f, EspKernelArgs& a) {
    if (!a.count) return;
    void* params[] = {&a};
    uint32_t blocks = (a.count + kThreads - 1) / kThreads;
    d->check(d->cuLaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, nullptr, params, nullptr),
             "cuLaunchKernel (ESP)");
    d->check(d->cuCtxSynchronize(), "ESP kernel");
  }
  void run_ops(CryptoOp* host, uint32_t n, CUfunction f) {
    if (!n) return;
    d->check(d->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    pack_ops(host, n, icv_len, buf, ops);
    put(dbuf, buf.data(), buf.size(), "cuMemcpyHtoD (ESP ops data)");
    put(dops, ops.data(), n * sizeof(DevOp), "cuMemcpyHtoD (ESP ops)");
    ensure(dok, n, "cuMemAlloc (ESP ok)");
    EspKernelArgs a;
    a.sas = reinterpret_cast<const DevSa*>(dsas.p);
    a.nsas = uint32_t(sas.size());
    a.count = n;
    a.buf = reinterpret_cast<uint8_t*>(dbuf.p);
    a.ops = reinterpret_cast<const DevOp*>(dops.p);
    a.ok = reinterpret_cast<uint8_t*>(dok.p);
    launch(f, a);
    get(buf.data(), dbuf, buf.size(), "cuMemcpyDtoH (ESP ops data)");
    ok.resize(n);
    get(ok.data(), dok, n, "cuMemcpyDtoH (ESP ok)");
    unpack_ops(host, n, icv_len, buf.data(), ops.data(), ok.data());
  }
  ~Impl() {
    if (!d) return;
    for (DevBuf* b : {&dsas, &dbuf, &dops, &dok, &doff, &dlen, &dsa, &dseq, &ddrop})
      if (b->p) d->cuMemFree(b->p);
    if (mod) d->cuModuleUnload(mod);
    if (ctx) d->cuDevicePrimaryCtxRelease(dev);
  }
};

CudaEngine::CudaEngine() : impl_(std::make_unique<Impl>()) {}
CudaEngine::~CudaEngine() = default;

std::unique_ptr<CudaEngine> CudaEngine::open(std::string_view device) {
  int ordinal = device::cuda::parse_device_name(device);
  if (ordinal < 0) throw Error(fmt::format("xfrm: '{}' is not a CUDA device name", device));
  device::cuda::DeviceInfo info = device::cuda::open_device_info(ordinal);  // throws: no GPU
  std::unique_ptr<CudaEngine> e(new CudaEngine());
  Impl& m = *e->impl_;
  m.d = &device::cuda::Driver::get();
  m.d->check(m.d->cuDeviceGet(&m.dev, info.ordinal), "cuDeviceGet");
  m.d->check(m.d->cuDevicePrimaryCtxRetain(&m.ctx, m.dev), "cuDevicePrimaryCtxRetain");
  m.d->check(m.d->cuCtxSetCurrent(m.ctx), "cuCtxSetCurrent");
  std::string ptx(esp_ptx());  // NUL-terminated for the driver's JIT
  m.d->check(m.d->cuModuleLoadDataEx(&m.mod, ptx.c_str(), 0, nullptr, nullptr),
             "cuModuleLoadDataEx (ESP kernels)");
  m.d->check(m.d->cuModuleGetFunction(&m.f_esp_enc, m.mod, "knod_esp_encrypt_batch"), "ESP");
  m.d->check(m.d->cuModuleGetFunction(&m.f_esp_dec, m.mod, "knod_esp_decrypt_batch"), "ESP");
  m.d->check(m.d->cuModuleGetFunction(&m.f_aead_enc, m.mod, "knod_aead_encrypt_batch"), "ESP");
  return e;
}

void CudaEngine::add_sa(uint32_t id, const SaConfig& cfg) {
  Impl& m = *impl_;
  DevSa s;
  s.cfg = cfg;
  if (!portable::portable_sa_init(s.key, cfg, portable::kTables))
    throw Error(
        fmt::format("xfrm: cuda engine: {} not supported (AES-GCM, AES-GMAC, "
                    "ChaCha20-Poly1305 only)",
                    cipher_name(cfg.cipher)));
  if (m.sas.size() <= id) m.sas.resize(id + 1), m.icv_len.resize(id + 1, 16);
  m.sas[id] = s;
  m.icv_len[id] = cfg.icv_len;
  m.d->check(m.d->cuCtxSetCurrent(m.ctx), "cuCtxSetCurrent");
  m.put(m.dsas, m.sas.data(), m.sas.size() * sizeof(DevSa), "cuMemcpyHtoD (SA table)");
}

void CudaEngine::encrypt(CryptoOp* ops, uint32_t n) {
  impl_->run_ops(ops, n, impl_->f_aead_enc);
}

void CudaEngine::decrypt(CryptoOp* ops, uint32_t n) {
  impl_->run_ops(ops, n, impl_->f_esp_dec);
}

void CudaEngine::esp_encrypt(Sad& sad, PacketBatch& b, Counters& stats) {
  Impl& m = *impl_;
  m.seq.assign(b.count, 0);
  // Host, in packet order (as esp_encrypt_batch): hard limits and sequence numbers.
  for (uint32_t i = 0; i < b.count; ++i) {
    if (b.sa[i] == kNoSaIndex || b.sa[i] >= sad.size() || b.sa[i] >= m.sas.size()) {
      if (b.drop[i] == uint8_t(Drop::kOk)) b.drop[i] = uint8_t(Drop::kNoSa);
      continue;
    }
    if (b.drop[i] != uint8_t(Drop::kOk)) continue;
    if (Drop d = esp_out_admit(sad[b.sa[i]], b.data_len[i], stats, &m.seq[i]); d != Drop::kOk)
      b.drop[i] = uint8_t(d), m.seq[i] = 0;
  }
  m.d->check(m.d->cuCtxSetCurrent(m.ctx), "cuCtxSetCurrent");
  size_t frames = size_t(b.count) * b.stride;
  m.put(m.dbuf, b.frames, frames, "cuMemcpyHtoD (frames)");
  m.put(m.doff, b.data_off, 4ull * b.count, "cuMemcpyHtoD (offsets)");
  m.put(m.dlen, b.data_len, 4ull * b.count, "cuMemcpyHtoD (lengths)");
  m.put(m.dsa, b.sa, 4ull * b.count, "cuMemcpyHtoD (SA indices)");
  m.put(m.dseq, m.seq.data(), 8ull * b.count, "cuMemcpyHtoD (sequence numbers)");
  m.put(m.ddrop, b.drop, b.count, "cuMemcpyHtoD (drops)");
  EspKernelArgs a;
  a.sas = reinterpret_cast<const DevSa*>(m.dsas.p);
  a.nsas = uint32_t(m.sas.size());
  a.count = b.count;
  a.frames = reinterpret_cast<uint8_t*>(m.dbuf.p);
  a.stride = b.stride;
  a.off = reinterpret_cast<uint32_t*>(m.doff.p);
  a.len = reinterpret_cast<uint32_t*>(m.dlen.p);
  a.sa = reinterpret_cast<const uint32_t*>(m.dsa.p);
  a.seq = reinterpret_cast<const uint64_t*>(m.dseq.p);
  a.drop = reinterpret_cast<uint8_t*>(m.ddrop.p);
  m.launch(m.f_esp_enc, a);
  m.get(b.frames, m.dbuf, frames, "cuMemcpyDtoH (frames)");
  m.get(b.data_off, m.doff, 4ull * b.count, "cuMemcpyDtoH (offsets)");
  m.get(b.data_len, m.dlen, 4ull * b.count, "cuMemcpyDtoH (lengths)");
  m.get(b.drop, m.ddrop, b.count, "cuMemcpyDtoH (drops)");
  for (uint32_t i = 0; i < b.count; ++i) {
    Drop d = Drop(b.drop[i]);
    if (d == Drop::kOk)
      ++stats.packets, stats.bytes += b.data_len[i];
    else
      ++stats[d];
    if (b.sa[i] != kNoSaIndex && b.sa[i] < sad.size()) {
      Sa& sa = sad[b.sa[i]];
      while (sa.lock.test_and_set(std::memory_order_acquire)) {
      }
      if (d == Drop::kOk)
        ++sa.stats.c.packets, sa.stats.c.bytes += b.data_len[i];
      else
        ++sa.stats.c[d];
      sa.lock.clear(std::memory_order_release);
    }
  }
}

}  // namespace knod::xfrm::gpu
