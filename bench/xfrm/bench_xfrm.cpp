// bench_xfrm: ESP encrypt/decrypt throughput per core (Gbit/s of IP packet bytes in) at
// 64/512/1420 B for AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, next to raw OpenSSL EVP
// AEAD on the same buffers (same nonce/AAD/tag work, no ESP framing), and the same ESP
// batches through knod's own portable AEAD code (BM_portable_*: the GPU engine's code).
// Not a test.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <cstring>
#include <memory>
#include <vector>

#include "xfrm/crypto/engines.h"
#include "xfrm/esp.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"

namespace {
using namespace knod::xfrm;

constexpr uint32_t kBatch = 256, kStride = 2048, kHead = 128;

const char* const kAead[] = {
    "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128",
    "aead 'rfc4106(gcm(aes))' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
    "aead 'rfc7539esp(chacha20,poly1305)' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
};

struct Bench {
  Sad sad;
  std::unique_ptr<CryptoEngine> engp;
  CryptoEngine& eng;
  std::vector<uint8_t> frames, pristine;
  std::vector<uint32_t> off, len, sa, len0, off0;
  std::vector<uint8_t> drop;
  PacketBatch b;
  Bench(int algo, uint32_t size, const char* engine = "openssl")
      : engp(make_engine(engine)), eng(*engp) {
    XfrmConfig c;
    parse_line(std::string("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x10 "
                           "mode tunnel replay-window 4096 flag esn ") +
                   kAead[algo],
               c);
    sad.add(c.states[0]);
    engine_load(eng, sad);
    frames.assign(size_t(kBatch) * kStride, 0);
    off.assign(kBatch, kHead), len.assign(kBatch, size), sa.assign(kBatch, 0),
        drop.assign(kBatch, 0);
    for (uint32_t i = 0; i < kBatch; ++i) {
      uint8_t* p = &frames[size_t(i) * kStride + kHead];
      for (uint32_t j = 0; j < size; ++j) p[j] = uint8_t(j * 7 + i);
      p[0] = 0x45, st16(p + 2, uint16_t(size)), p[9] = 17, p[8] = 64;
      ipv4_set_csum(p);
    }
    pristine = frames, len0 = len, off0 = off;
    b = PacketBatch{kBatch, kStride, frames.data(), off.data(), len.data(), drop.data(), sa.data()};
  }
  void reset() {
    for (uint32_t i = 0; i < kBatch; ++i) {
      std::memcpy(&frames[size_t(i) * kStride + off0[i]], &pristine[size_t(i) * kStride + off0[i]],
                  len0[i]);
      off[i] = off0[i], len[i] = len0[i], sa[i] = 0;
    }
  }
};

void report(benchmark::State& st, uint32_t size) {
  double bits = double(st.iterations()) * kBatch * size * 8;
  st.counters["Gbps"] = benchmark::Counter(bits / 1e9, benchmark::Counter::kIsRate);
}

void knod_encrypt(benchmark::State& st, const char* engine) {
  Bench x(int(st.range(0)), uint32_t(st.range(1)), engine);
  Counters c;
  for (auto _ : st) {
    x.reset();
    esp_encrypt_batch(x.sad, x.eng, x.b, c);
    benchmark::DoNotOptimize(x.frames.data());
  }
  if (c.packets != uint64_t(st.iterations()) * kBatch) st.SkipWithError("drops");
  report(st, uint32_t(st.range(1)));
}

void knod_decrypt(benchmark::State& st, const char* engine) {
  Bench x(int(st.range(0)), uint32_t(st.range(1)), engine);
  Counters c;
  esp_encrypt_batch(x.sad, x.eng, x.b, c);
  x.pristine = x.frames, x.off0 = x.off, x.len0 = x.len;
  Counters d;
  for (auto _ : st) {
    x.reset();
    replay_init(x.sad[0].replay, 4096);
    esp_decrypt_batch(x.sad, x.eng, x.b, d);
    benchmark::DoNotOptimize(x.frames.data());
  }
  if (d.packets != uint64_t(st.iterations()) * kBatch) st.SkipWithError("drops");
  report(st, uint32_t(st.range(1)));
}

void BM_knod_encrypt(benchmark::State& st) {
  knod_encrypt(st, "openssl");
}
void BM_knod_decrypt(benchmark::State& st) {
  knod_decrypt(st, "openssl");
}
void BM_portable_encrypt(benchmark::State& st) {
  knod_encrypt(st, "portable");
}
void BM_portable_decrypt(benchmark::State& st) {
  knod_decrypt(st, "portable");
}

/// Raw EVP AEAD, same key schedule reuse, same buffers: nonce, 12-byte AAD, data, 16-byte tag.
void raw_evp(benchmark::State& st, int enc) {
  Bench x(int(st.range(0)), uint32_t(st.range(1)));
  const SaConfig& c = x.sad[0].cfg;
  const EVP_CIPHER* ci = c.cipher == Cipher::kChaCha20Poly1305 ? EVP_chacha20_poly1305()
                         : c.enc_key_len == 16                 ? EVP_aes_128_gcm()
                                                               : EVP_aes_256_gcm();
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(ctx, ci, nullptr, c.enc_key, nullptr, enc);
  uint32_t size = uint32_t(st.range(1));
  std::vector<uint8_t> tags(kBatch * 16);
  // Decrypt: produce real ciphertext/tags first so every op verifies.
  auto pass = [&](int e) {
    bool ok = true;
    for (uint32_t i = 0; i < kBatch; ++i) {
      uint8_t* p = &x.frames[size_t(i) * kStride + kHead];
      uint8_t nonce[12] = {}, aad[12] = {};
      std::memcpy(nonce, c.salt, 4), st32(nonce + 8, i);
      int outl;
      EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, nonce, e);
      if (!e) EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, &tags[i * 16]);
      EVP_CipherUpdate(ctx, nullptr, &outl, aad, 12);
      EVP_CipherUpdate(ctx, p, &outl, p, int(size));
      ok &= EVP_CipherFinal_ex(ctx, p + size, &outl) == 1;
      if (e) EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, &tags[i * 16]);
    }
    return ok;
  };
  EVP_CIPHER_CTX_free(ctx);
  ctx = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(ctx, ci, nullptr, c.enc_key, nullptr, 1);
  if (!enc) {
    pass(1);
    x.pristine = x.frames;
    EVP_CIPHER_CTX_free(ctx);
    ctx = EVP_CIPHER_CTX_new();
    EVP_CipherInit_ex(ctx, ci, nullptr, c.enc_key, nullptr, 0);
  }
  bool ok = true;
  for (auto _ : st) {
    x.reset();
    ok &= pass(enc);
    benchmark::DoNotOptimize(x.frames.data());
  }
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) st.SkipWithError("EVP failure");
  report(st, size);
}
void BM_evp_encrypt(benchmark::State& st) {
  raw_evp(st, 1);
}
void BM_evp_decrypt(benchmark::State& st) {
  raw_evp(st, 0);
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"algo", "bytes"});  // algo: 0 AES-128-GCM, 1 AES-256-GCM, 2 ChaCha20-Poly1305
  for (int a = 0; a < 3; ++a)
    for (int s : {64, 512, 1420}) b->Args({a, s});
}

BENCHMARK(BM_knod_encrypt)->Apply(args);
BENCHMARK(BM_evp_encrypt)->Apply(args);
BENCHMARK(BM_knod_decrypt)->Apply(args);
BENCHMARK(BM_evp_decrypt)->Apply(args);
BENCHMARK(BM_portable_encrypt)->Apply(args);
BENCHMARK(BM_portable_decrypt)->Apply(args);

}  // namespace

BENCHMARK_MAIN();
