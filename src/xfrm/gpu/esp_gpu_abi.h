// What the ESP kernels (esp_kernels.cu) and their host launcher (cuda_engine.cpp) share:
// plain structs, laid out the same on both sides (x86-64 and nvptx64: same sizes, same
// alignment). Source of the per-packet work: xfrm/esp.h, xfrm/crypto/portable/aead.h.
#pragma once

#include <stdint.h>

#include "xfrm/crypto/portable/aead.h"
#include "xfrm/sa.h"

namespace knod::xfrm::gpu {

/// Per-SA state in device memory: the SA's config (outbound framing) and its keys.
/// Sequence numbers stay on the host (assigned in packet order, as the CPU path does).
struct DevSa {
  SaConfig cfg;
  portable::PortableSa key;
};

/// One host-prepared AEAD op with its packet bytes copied to `buf` at `base`: every field is
/// an offset from `base` (the op's lowest pointer), so the op is position independent.
struct DevOp {
  uint64_t base = 0;  ///< bytes into the staging buffer
  uint32_t sa = 0;
  uint32_t iv = 0, data = 0, len = 0, aad2 = 0, aad2_len = 0, icv = 0;
  uint8_t aad[12] = {};
  uint8_t aad_len = 0;
  uint8_t has_aad2 = 0;
};

/// knod_esp_encrypt_batch / knod_esp_decrypt_batch / knod_aead_encrypt_batch argument block.
struct EspKernelArgs {
  const DevSa* sas = nullptr;
  uint32_t nsas = 0;
  uint32_t count = 0;  ///< packets (encrypt batch) or ops
  // Full ESP outbound (knod_esp_encrypt_batch): slot i at frames + i * stride.
  uint8_t* frames = nullptr;
  uint32_t stride = 0;
  uint32_t* off = nullptr;        ///< in/out: bytes from slot start to the IP header
  uint32_t* len = nullptr;        ///< in/out: IP packet bytes
  const uint32_t* sa = nullptr;   ///< SA index per packet (kNoSaIndex: leave as is)
  const uint64_t* seq = nullptr;  ///< sequence number per packet (host-assigned)
  uint8_t* drop = nullptr;        ///< in: kOk to process; out: Drop
  // AEAD ops (knod_esp_decrypt_batch, knod_aead_encrypt_batch).
  uint8_t* buf = nullptr;
  const DevOp* ops = nullptr;
  uint8_t* ok = nullptr;  ///< out per op
};

/// Runs op `i` of `a` (the body of knod_esp_decrypt_batch / knod_aead_encrypt_batch, also
/// callable on the host to check the staging layout): rebuilds the CryptoOp from offsets,
/// runs the AEAD, writes a.ok[i].
KNOD_HD inline void run_dev_op(const EspKernelArgs& a, uint32_t i, bool enc, const uint32_t* te0,
                               const uint8_t* sbox) {
  const DevOp& d = a.ops[i];
  a.ok[i] = 0;
  if (d.sa >= a.nsas) return;
  uint8_t* base = a.buf + d.base;
  CryptoOp op;
  op.sa = d.sa;
  op.iv = base + d.iv;
  op.data = base + d.data;
  op.len = d.len;
  for (int k = 0; k < 12; ++k) op.aad[k] = d.aad[k];
  op.aad_len = d.aad_len;
  op.aad2 = d.has_aad2 ? base + d.aad2 : nullptr;
  op.aad2_len = d.aad2_len;
  op.icv = base + d.icv;
  portable::aead_run(a.sas[d.sa].key, portable::kTables, te0, sbox, op, enc);
  a.ok[i] = op.ok;
}

}  // namespace knod::xfrm::gpu
