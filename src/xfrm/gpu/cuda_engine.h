// Crypto engine on an NVIDIA GPU: the portable AEAD code (xfrm/crypto/portable) compiled to
// PTX at build time (esp_kernels.cu), loaded through knod's CUDA driver wrapper
// (device/cuda/driver.h, libcuda loaded at run time). Per-SA keys (DevSa) live in device
// memory; each batch of ops is staged (pinned-free, plain copies), run one op per thread,
// and copied back. AEAD SAs only (AES-GCM, AES-GMAC, ChaCha20-Poly1305).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xfrm/crypto/engine.h"
#include "xfrm/esp.h"
#include "xfrm/gpu/esp_gpu_abi.h"

namespace knod::xfrm::gpu {

/// The ESP kernels' PTX (sm_90, built by clang-19 from esp_kernels.cu).
std::string_view esp_ptx();

/// Staging of host ops for the op kernels: each op's bytes (IV .. ICV, GMAC AAD) are copied
/// into `buf` and described by offsets in `dev`. `icv_len[sa]`: ICV bytes per SA id.
void pack_ops(const CryptoOp* ops, uint32_t n, const std::vector<uint8_t>& icv_len,
              std::vector<uint8_t>& buf, std::vector<DevOp>& dev);
/// Copies each op's bytes back from `buf` and sets ops[i].ok = ok[i].
void unpack_ops(CryptoOp* ops, uint32_t n, const std::vector<uint8_t>& icv_len, const uint8_t* buf,
                const DevOp* dev, const uint8_t* ok);

class CudaEngine final : public CryptoEngine {
 public:
  /// Opens "cuda" or "cuda:N" and loads the ESP module. Throws knod::Error
  /// "no NVIDIA driver (libcuda.so.1 not found)", "no CUDA device N (found M)", or a
  /// module-load error.
  static std::unique_ptr<CudaEngine> open(std::string_view device = "cuda");
  ~CudaEngine() override;

  const char* name() const override { return "cuda"; }
  /// Keys the SA on the host (portable_sa_init) and uploads the SA table. Throws knod::Error
  /// for non-AEAD SAs.
  void add_sa(uint32_t id, const SaConfig& cfg) override;
  void encrypt(CryptoOp* ops, uint32_t n) override;
  void decrypt(CryptoOp* ops, uint32_t n) override;

  /// Outbound ESP with the framing on the device too (knod_esp_encrypt_batch): b.sa[i] chosen
  /// (as esp_encrypt_batch takes it); limits and sequence numbers are assigned on the host in
  /// packet order, so the bytes equal the CPU path's. Counters as esp_encrypt_batch.
  void esp_encrypt(Sad& sad, PacketBatch& b, Counters& stats);

  struct Impl;

 private:
  CudaEngine();
  std::unique_ptr<Impl> impl_;
};

}  // namespace knod::xfrm::gpu
