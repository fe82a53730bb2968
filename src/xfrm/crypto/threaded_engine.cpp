#include "xfrm/crypto/threaded_engine.h"

#include <algorithm>

#include "base/error.h"

namespace knod::xfrm {

ThreadedEngine::ThreadedEngine(std::vector<std::unique_ptr<CryptoEngine>> engines,
                               ThreadedOptions opts)
    : engines_(std::move(engines)),
      opts_(opts),
      pool_(device::CpuOptions{uint32_t(std::max<size_t>(1, engines_.size())), 8, true, -1,
                               /*walk_apart=*/true}) {
  if (engines_.empty()) throw Error("xfrm: threaded engine needs at least one engine");
}

ThreadedEngine::~ThreadedEngine() = default;

void ThreadedEngine::add_sa(uint32_t id, const SaConfig& cfg) {
  for (auto& e : engines_) e->add_sa(id, cfg);
}

void ThreadedEngine::encrypt(CryptoOp* ops, uint32_t n) {
  run(ops, n, true);
}

void ThreadedEngine::decrypt(CryptoOp* ops, uint32_t n) {
  run(ops, n, false);
}

void ThreadedEngine::run(CryptoOp* ops, uint32_t n, bool enc) {
  const uint32_t w = pool_.workers();
  uint64_t bytes = 0;
  if (w > 1 && n >= opts_.min_ops)
    for (uint32_t i = 0; i < n && bytes < opts_.min_bytes; ++i)
      bytes += ops[i].len + ops[i].aad2_len;
  if (w == 1 || n < opts_.min_ops || bytes < opts_.min_bytes) {
    CryptoEngine& e = *engines_[0];
    return enc ? e.encrypt(ops, n) : e.decrypt(ops, n);
  }
  const uint32_t chunk = opts_.chunk ? opts_.chunk : std::max(8u, n / (4 * w));
  // Worker `cpu` uses engines_[cpu] only: its contexts are touched by one thread.
  pool_.for_chunks(n, chunk, [&](uint32_t lo, uint32_t hi, uint32_t cpu) {
    CryptoEngine& e = *engines_[cpu];
    enc ? e.encrypt(ops + lo, hi - lo) : e.decrypt(ops + lo, hi - lo);
  });
}

}  // namespace knod::xfrm
