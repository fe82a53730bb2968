// Throughput fixtures for the ESP batch path next to raw OpenSSL EVP AEAD on the same buffers:
// shared by `knod bench --xfrm` (src/cli/cmd_bench_xfrm.cpp) and bench_xfrm (bench/xfrm).
// Not used on the packet path. See docs/PERFORMANCE.md (xfrm).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xfrm/esp.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace knod::xfrm {

constexpr uint32_t kBenchStride = 2048;  ///< bytes per slot
constexpr uint32_t kBenchHead = 128;     ///< headroom before each IP packet (ESP needs <= 80)

/// The simple IMIX: IP packets of 64, 576 and 1500 bytes in the ratio 7:4:1, interleaved
/// (12 sizes; a batch cycles through them).
std::vector<uint32_t> imix_sizes();

/// Short transform name: "AES-128-GCM", "AES-256-GCM", "ChaCha20-Poly1305", "AES-128-GMAC",
/// or ip-xfrm's name for a non-AEAD transform.
std::string alg_name(const SaConfig& c);

/// True for the AEADs the bench measures: rfc4106(gcm(aes)) and rfc7539esp(chacha20,poly1305)
/// (GMAC ciphers nothing, CBC+HMAC is not an AEAD).
bool bench_aead(const SaConfig& c);

/// `count` plaintext IPv4/UDP packets (transport mode: the SA's own addresses and family)
/// whose IP lengths cycle through `sizes` (bytes), in slots of kBenchStride at kBenchHead, and
/// a one-SA SAD (`cfg` without lifetime limits) with its crypto engine, whose crypto stage
/// runs on `workers` threads (make_engine(engine, workers); 1: inline on the caller).
/// Throws knod::Error for a size outside 28..1800 bytes or an engine that is not available.
struct EspBench {
  EspBench(const SaConfig& cfg, const std::vector<uint32_t>& sizes, uint32_t count,
           const char* engine = "openssl", uint32_t workers = 1);
  ~EspBench();

  /// Restores every slot (bytes, offset, length) from the pristine copy.
  void reset();
  /// One outbound batch through esp_encrypt_batch on the current slots; true when all passed.
  bool encrypt();
  /// Resets the replay window, then one inbound batch through esp_decrypt_batch; true when all
  /// passed.
  bool decrypt();
  /// Encrypts the pristine packets once and makes the ESP packets the pristine copy (decrypt
  /// runs), and fills ops(): the CryptoOp esp_in_prepare gives for each ESP packet.
  void seal();

  /// Sum of the plaintext IP packet bytes of one batch.
  uint64_t plain_bytes = 0;
  uint32_t count = 0;
  Sad sad;
  std::unique_ptr<CryptoEngine> eng;
  std::vector<uint8_t> frames, pristine, drop;
  std::vector<uint32_t> off, len, sa, off0, len0;
  std::vector<CryptoOp> ops;  ///< after seal(): per packet nonce IV, AAD, data, ICV
  PacketBatch b;
  Counters stats;
};

/// OpenSSL EVP AEAD alone on CryptoOps: nonce = salt | IV (RFC 4106 §4, RFC 7634 §2), AAD,
/// `len` bytes at `data` in place, tag at `icv` (written on encrypt, checked on decrypt).
/// The key schedule is done once; only the nonce is set per op (what a tuned caller does).
class RawAead {
 public:
  /// enc: 1 encrypt, 0 decrypt. Throws knod::Error when `cfg` is not a bench_aead() SA.
  RawAead(const SaConfig& cfg, int enc);
  ~RawAead();
  RawAead(const RawAead&) = delete;
  RawAead& operator=(const RawAead&) = delete;
  /// Runs `n` ops; true when every one succeeded (decrypt: every tag matched).
  bool run(CryptoOp* ops, uint32_t n);

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
  uint8_t salt_[4] = {};
  uint8_t icv_len_ = 16;
  int enc_ = 1;
};

}  // namespace knod::xfrm
