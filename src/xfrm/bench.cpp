#include "xfrm/bench.h"

#include <fmt/core.h>
#include <openssl/evp.h>

#include <cstring>

#include "base/error.h"
#include "xfrm/crypto/engines.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"

namespace knod::xfrm {

std::vector<uint32_t> imix_sizes() {
  // 7 x 64, 4 x 576, 1 x 1500, spread out so that a batch of any length keeps the mix.
  return {64, 576, 64, 64, 576, 64, 1500, 64, 576, 64, 64, 576};
}

std::string alg_name(const SaConfig& c) {
  switch (c.cipher) {
    case Cipher::kAesGcm:
      return fmt::format("AES-{}-GCM", c.enc_key_len * 8);
    case Cipher::kAesGmac:
      return fmt::format("AES-{}-GMAC", c.enc_key_len * 8);
    case Cipher::kChaCha20Poly1305:
      return "ChaCha20-Poly1305";
    default:
      return fmt::format("{}+{}", cipher_name(c.cipher), auth_name(c.auth));
  }
}

bool bench_aead(const SaConfig& c) {
  return c.cipher == Cipher::kAesGcm || c.cipher == Cipher::kChaCha20Poly1305;
}

EspBench::EspBench(const SaConfig& cfg, const std::vector<uint32_t>& sizes, uint32_t n,
                   const char* engine, uint32_t workers)
    : count(n), eng(make_engine(engine, workers)) {
  SaConfig c = cfg;
  c.limits = Limits{};
  sad.add(c);
  engine_load(*eng, sad);
  bool v6 = c.mode == Mode::kTransport && c.src.family == 6;
  uint32_t hdr = v6 ? kIpv6Hdr : kIpv4Hdr;
  frames.assign(size_t(count) * kBenchStride, 0);
  off.assign(count, kBenchHead), len.assign(count, 0), sa.assign(count, 0), drop.assign(count, 0);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t size = sizes[i % sizes.size()];
    if (size < hdr + kUdpHdr || size > 1800)
      throw Error(fmt::format("bench: packet size {} bytes: want {}..1800", size, hdr + kUdpHdr));
    uint8_t* p = &frames[size_t(i) * kBenchStride + kBenchHead];
    for (uint32_t j = hdr + kUdpHdr; j < size; ++j) p[j] = uint8_t(j * 7 + i);
    if (v6) {
      st32(p, 0x60000000u), st16(p + 4, uint16_t(size - hdr)), p[6] = kProtoUdp, p[7] = 64;
      std::memcpy(p + 8, c.src.bytes, 16), std::memcpy(p + 24, c.dst.bytes, 16);
    } else {
      p[0] = 0x45, st16(p + 2, uint16_t(size)), p[8] = 64, p[9] = kProtoUdp;
      if (c.mode == Mode::kTransport)
        std::memcpy(p + 12, c.src.bytes, 4), std::memcpy(p + 16, c.dst.bytes, 4);
      else
        st32(p + 12, 0x0a010001u), st32(p + 16, 0x0a020001u);  // 10.1.0.1 -> 10.2.0.1
      ipv4_set_csum(p);
    }
    st16(p + hdr, 12345), st16(p + hdr + 2, 5001), st16(p + hdr + 4, uint16_t(size - hdr));
    len[i] = size;
    plain_bytes += size;
  }
  pristine = frames, off0 = off, len0 = len;
  b = PacketBatch{count,      kBenchStride, frames.data(), off.data(),
                  len.data(), drop.data(),  sa.data()};
}

EspBench::~EspBench() = default;

void EspBench::reset() {
  for (uint32_t i = 0; i < count; ++i) {
    size_t s = size_t(i) * kBenchStride;
    std::memcpy(&frames[s + off0[i]], &pristine[s + off0[i]], len0[i]);
    off[i] = off0[i], len[i] = len0[i], sa[i] = 0, drop[i] = 0;
  }
  sad[0].oseq = 0;  // a run never cycles the 32-bit counter
}

bool EspBench::encrypt() {
  uint64_t before = stats.packets;
  esp_encrypt_batch(sad, *eng, b, stats);
  return stats.packets - before == count;
}

bool EspBench::decrypt() {
  replay_init(sad[0].replay, sad[0].cfg.replay_window, 0);
  uint64_t before = stats.packets;
  esp_decrypt_batch(sad, *eng, b, stats);
  return stats.packets - before == count;
}

void EspBench::seal() {
  reset();
  if (!encrypt()) throw Error("bench: ESP encrypt of the bench packets failed");
  pristine = frames, off0 = off, len0 = len;
  ops.assign(count, CryptoOp{});
  replay_init(sad[0].replay, sad[0].cfg.replay_window, 0);
  for (uint32_t i = 0; i < count; ++i) {
    Sa* s = nullptr;
    PktState st;
    Drop d = esp_in_prepare(sad, &frames[size_t(i) * kBenchStride], off[i], len[i], s, st, ops[i]);
    if (d != Drop::kOk) throw Error(fmt::format("bench: sealed packet {}: {}", i, drop_name(d)));
  }
}

RawAead::RawAead(const SaConfig& c, int enc) : icv_len_(c.icv_len), enc_(enc) {
  if (!bench_aead(c)) throw Error(fmt::format("bench: {} is not an AEAD", alg_name(c)));
  const EVP_CIPHER* ci = c.cipher == Cipher::kChaCha20Poly1305 ? EVP_chacha20_poly1305()
                         : c.enc_key_len == 16                 ? EVP_aes_128_gcm()
                         : c.enc_key_len == 24                 ? EVP_aes_192_gcm()
                                                               : EVP_aes_256_gcm();
  std::memcpy(salt_, c.salt, 4);
  ctx_ = EVP_CIPHER_CTX_new();
  if (!ctx_ || !EVP_CipherInit_ex(ctx_, ci, nullptr, c.enc_key, nullptr, enc))
    throw Error("bench: OpenSSL AEAD init failed");
}

RawAead::~RawAead() {
  EVP_CIPHER_CTX_free(ctx_);
}

bool RawAead::run(CryptoOp* ops, uint32_t n) {
  bool ok = true;
  for (uint32_t i = 0; i < n; ++i) {
    CryptoOp& op = ops[i];
    uint8_t nonce[12], tail[16];
    std::memcpy(nonce, salt_, 4), std::memcpy(nonce + 4, op.iv, 8);
    int outl = 0;
    EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, enc_);
    if (!enc_) EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, icv_len_, op.icv);
    EVP_CipherUpdate(ctx_, nullptr, &outl, op.aad, op.aad_len);
    EVP_CipherUpdate(ctx_, op.data, &outl, op.data, int(op.len));
    ok &= EVP_CipherFinal_ex(ctx_, tail, &outl) == 1;
    if (enc_) EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, icv_len_, op.icv);
  }
  return ok;
}

}  // namespace knod::xfrm
