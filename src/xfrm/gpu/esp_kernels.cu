// ESP batch kernels, one packet (or op) per thread. Built for the device only by clang-19
// (CUDA, -nocudainc: no CUDA headers needed) to PTX at build time and embedded in knod.
// The ESP per-packet code is the CPU's own (xfrm/esp_out.cpp, unchanged): the clang pragma
// force_cuda_host_device compiles it for both sides. Crypto: xfrm/crypto/portable.
#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "xfrm/addr.h"
#include "xfrm/drop.h"
#include "xfrm/replay.h"

// Device versions of the two libc calls esp_out.cpp makes (clang overloads on host/device).
namespace std {
__attribute__((device)) inline void* memcpy(void* d, const void* s, size_t n) {
  return __builtin_memcpy(d, s, n);
}
__attribute__((device)) inline void* memmove(void* d, const void* s, size_t n) {
  auto* dd = static_cast<unsigned char*>(d);
  auto* ss = static_cast<const unsigned char*>(s);
  if (dd < ss)
    for (size_t i = 0; i < n; ++i) dd[i] = ss[i];
  else
    for (size_t i = n; i-- > 0;) dd[i] = ss[i];
  return d;
}
}  // namespace std

#pragma clang force_cuda_host_device begin
#include "xfrm/sa.h"
#pragma clang force_cuda_host_device end
#include "xfrm/sad.h"
#include "xfrm/spd.h"
#pragma clang force_cuda_host_device begin
#include "xfrm/crypto/engine.h"
#include "xfrm/esp.h"
#include "xfrm/esp_out.cpp"
#include "xfrm/ip.h"
#include "xfrm/tunnel.h"
#pragma clang force_cuda_host_device end

#include "xfrm/gpu/esp_gpu_abi.h"

using namespace knod::xfrm;
using knod::xfrm::gpu::DevSa;
using knod::xfrm::gpu::EspKernelArgs;
using knod::xfrm::portable::kTables;

namespace {

__attribute__((device)) inline uint32_t global_id() {
  return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}

/// AES tables from constant memory into this block's shared memory (random per-thread
/// lookups serialize in the constant cache, not in shared memory).
__attribute__((shared)) uint32_t s_te0[256];
__attribute__((shared)) uint8_t s_sbox[256];

__attribute__((device)) inline void load_tables() {
  for (uint32_t i = __nvvm_read_ptx_sreg_tid_x(); i < 256; i += __nvvm_read_ptx_sreg_ntid_x())
    s_te0[i] = kTables.te0[i], s_sbox[i] = kTables.sbox[i];
  __syncthreads();
}

}  // namespace

/// Outbound ESP, whole packet on the device: framing (esp_out_prepare), AEAD seal, and the
/// UDP checksum of ESP-in-UDP over IPv6. Packets with drop != kOk or no SA are left alone.
extern "C" __attribute__((global)) void knod_esp_encrypt_batch(EspKernelArgs a) {
  load_tables();
  uint32_t i = global_id();
  if (i >= a.count || a.drop[i] != uint8_t(Drop::kOk) || a.sa[i] >= a.nsas) return;
  const DevSa& s = a.sas[a.sa[i]];
  uint8_t* slot = a.frames + size_t(i) * a.stride;
  CryptoOp op;
  Drop d = esp_out_prepare(s.cfg, a.sa[i], a.seq[i], slot, a.stride, a.off[i], a.len[i], op);
  if (d == Drop::kOk) {
    portable::aead_run(s.key, kTables, s_te0, s_sbox, op, true);
    if (!op.ok) d = Drop::kMalformed;
  }
  if (d == Drop::kOk && s.cfg.encap && s.cfg.src.family == 6) {
    uint8_t* ip = slot + a.off[i];
    uint32_t uo = ip6_udp_off(ip, a.len[i]);
    uint8_t* u = ip + uo;
    st16(u + 6, udp6_csum(ip, u, a.len[i] - uo));
  }
  a.drop[i] = uint8_t(d);
}

/// Inbound ESP, step 2 of 3: verify the ICV and decrypt each op the host prepared (parse,
/// SA lookup, ESN inference and window pre-check: esp_in_prepare). The host then re-checks
/// and advances the window in packet order (esp_in_finish), serialized per SA.
extern "C" __attribute__((global)) void knod_esp_decrypt_batch(EspKernelArgs a) {
  load_tables();
  uint32_t i = global_id();
  if (i < a.count) gpu::run_dev_op(a, i, false, s_te0, s_sbox);
}

/// AEAD seal of host-prepared ops (CudaEngine::encrypt, any caller of CryptoEngine).
extern "C" __attribute__((global)) void knod_aead_encrypt_batch(EspKernelArgs a) {
  load_tables();
  uint32_t i = global_id();
  if (i < a.count) gpu::run_dev_op(a, i, true, s_te0, s_sbox);
}
