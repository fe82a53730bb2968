// Host staging of CryptoOps for the GPU op kernels (see cuda_engine.h).
#include <algorithm>
#include <cstring>

#include "xfrm/gpu/cuda_engine.h"

namespace knod::xfrm::gpu {
namespace {

struct Span {
  uint8_t* lo;
  uint8_t* hi;
};

Span span_of(const CryptoOp& op, const std::vector<uint8_t>& icv_len) {
  uint32_t icv = op.sa < icv_len.size() ? icv_len[op.sa] : 16;
  uint8_t* lo = std::min({op.iv, op.data, op.icv});
  uint8_t* hi = std::max({op.iv + 8, op.data + op.len, op.icv + icv});
  if (op.aad2) lo = std::min(lo, op.aad2), hi = std::max(hi, op.aad2 + op.aad2_len);
  return {lo, hi};
}

}  // namespace

void pack_ops(const CryptoOp* ops, uint32_t n, const std::vector<uint8_t>& icv_len,
              std::vector<uint8_t>& buf, std::vector<DevOp>& dev) {
  dev.resize(n);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Span s = span_of(ops[i], icv_len);
    total += (uint64_t(s.hi - s.lo) + 15) & ~uint64_t(15);
  }
  buf.resize(total);
  uint64_t at = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const CryptoOp& op = ops[i];
    Span s = span_of(op, icv_len);
    DevOp& d = dev[i];
    d = DevOp{};
    d.base = at;
    d.sa = op.sa;
    d.iv = uint32_t(op.iv - s.lo);
    d.data = uint32_t(op.data - s.lo);
    d.len = op.len;
    d.icv = uint32_t(op.icv - s.lo);
    std::memcpy(d.aad, op.aad, sizeof d.aad);
    d.aad_len = op.aad_len;
    if (op.aad2) d.has_aad2 = 1, d.aad2 = uint32_t(op.aad2 - s.lo), d.aad2_len = op.aad2_len;
    std::memcpy(buf.data() + at, s.lo, size_t(s.hi - s.lo));
    at += (uint64_t(s.hi - s.lo) + 15) & ~uint64_t(15);
  }
}

void unpack_ops(CryptoOp* ops, uint32_t n, const std::vector<uint8_t>& icv_len, const uint8_t* buf,
                const DevOp* dev, const uint8_t* ok) {
  for (uint32_t i = 0; i < n; ++i) {
    Span s = span_of(ops[i], icv_len);
    std::memcpy(s.lo, buf + dev[i].base, size_t(s.hi - s.lo));
    ops[i].ok = ok[i];
  }
}

}  // namespace knod::xfrm::gpu
