// Pluggable crypto engines (VPP vnet/crypto style): the ESP code fills a vector of plain
// CryptoOp records and hands the whole vector to an engine, which runs them in place.
// An engine instance is used by one thread at a time (per-thread contexts, no locks);
// a GPU engine can take the same records as a structure it copies to the device.
#pragma once

#include <cstdint>

#include "xfrm/sa.h"

namespace knod::xfrm {

/// One packet's crypto work. All pointers point into the packet (or the op's own aad buffer).
/// Encrypt: cipher `data` in place, then write the ICV to `icv`.
/// Decrypt: verify the ICV at `icv` first (constant time), then decipher `data` in place.
struct CryptoOp {
  uint32_t sa = 0;          ///< SA id the engine was given in add_sa()
  uint8_t* iv = nullptr;    ///< explicit IV on the wire (8 B AEAD; 16 B AES-CBC; 8 B 3DES)
  uint8_t* data = nullptr;  ///< bytes to (de)cipher: payload | padding | pad len | next header
  uint32_t len = 0;         ///< bytes at data
  uint8_t aad[12] = {};     ///< AEAD AAD: SPI | seq (8 B) or SPI | seq-hi | seq-lo (12 B, ESN)
  uint8_t aad_len = 0;
  uint8_t* aad2 = nullptr;  ///< AEAD: more AAD after `aad` (GMAC: IV .. end of trailer)
  uint32_t aad2_len = 0;
  uint8_t* auth = nullptr;  ///< HMAC input on the wire: ESP header .. end of ciphertext
  uint32_t auth_len = 0;
  uint32_t seq_hi = 0;  ///< ESN high bits (network order appended to HMAC input, RFC 4303 §2.2.1)
  bool esn = false;
  uint8_t* icv = nullptr;  ///< ICV on the wire
  uint8_t ok = 0;          ///< out: 1 when the op succeeded (decrypt: ICV matched)
};

/// A crypto engine. add_sa() may allocate (control path); run() must not.
class CryptoEngine {
 public:
  virtual ~CryptoEngine() = default;
  virtual const char* name() const = 0;
  /// Prepares keys/contexts for SA id `id` (ids are small and dense: Sa::index).
  /// Throws knod::Error when the algorithm is not available.
  virtual void add_sa(uint32_t id, const SaConfig& cfg) = 0;
  /// Runs `n` ops. Sets ops[i].ok. Never throws.
  virtual void encrypt(CryptoOp* ops, uint32_t n) = 0;
  virtual void decrypt(CryptoOp* ops, uint32_t n) = 0;
};

}  // namespace knod::xfrm
