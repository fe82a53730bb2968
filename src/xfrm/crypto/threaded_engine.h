// The crypto stage of a batch over N worker threads: one inner engine per worker (each with
// its own OpenSSL EVP_CIPHER_CTX / EVP_MAC_CTX per SA: a context is never shared between
// threads), ops split into chunks claimed on a device::CpuDevice (the XDP CPU device's pool). Every
// op reads and writes only its own packet and its own CryptoOp, so the result (bytes, ok flags) is
// the same as one engine running the vector in order; sequence numbers, the replay window and
// counters are not touched here (prepare and finish stay serial in process.cpp).
#pragma once

#include <memory>
#include <vector>

#include "device/cpu/cpu_device.h"
#include "xfrm/crypto/engine.h"

namespace knod::xfrm {

struct ThreadedOptions {
  /// Vectors shorter than this (ops) or lighter than min_bytes run inline on the caller with
  /// engine 0: waking workers costs more than it saves there.
  uint32_t min_ops = 32;
  uint32_t min_bytes = 16384;  ///< bytes of payload (len, GMAC: aad2_len) in the whole vector
  uint32_t chunk = 0;          ///< ops per claim; 0: n / (4 * workers), at least 8
};

class ThreadedEngine final : public CryptoEngine {
 public:
  /// `engines`: one per worker (engines.size() workers, the caller being worker 0), all of
  /// the same kind and fresh (no SAs yet). Throws knod::Error when `engines` is empty.
  explicit ThreadedEngine(std::vector<std::unique_ptr<CryptoEngine>> engines,
                          ThreadedOptions opts = {});
  ~ThreadedEngine() override;
  const char* name() const override { return engines_[0]->name(); }
  /// add_sa on every inner engine (control path; not concurrently with encrypt/decrypt).
  void add_sa(uint32_t id, const SaConfig& cfg) override;
  void encrypt(CryptoOp* ops, uint32_t n) override;
  void decrypt(CryptoOp* ops, uint32_t n) override;
  uint32_t workers() const { return pool_.workers(); }

 private:
  void run(CryptoOp* ops, uint32_t n, bool enc);
  std::vector<std::unique_ptr<CryptoEngine>> engines_;
  ThreadedOptions opts_;
  device::CpuDevice pool_;  ///< engines_.size() workers, the caller being worker 0
};

}  // namespace knod::xfrm
