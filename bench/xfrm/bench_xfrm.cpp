// bench_xfrm: ESP encrypt/decrypt throughput per core (Gbit/s of plaintext IP packet bytes) at
// 64/512/1420 B for AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, next to raw OpenSSL EVP
// AEAD on the same buffers (same key, nonce, AAD, lengths; no ESP framing), and the same ESP
// batches through knod's own portable AEAD code (BM_portable_*: the GPU engine's code).
// The fixtures are knod::xfrm::EspBench / RawAead (src/xfrm/bench.h), shared with
// `knod bench --xfrm`. Packets are restored between batches with the timer paused. Not a test.
#include <benchmark/benchmark.h>

#include <string>

#include "xfrm/bench.h"
#include "xfrm/parse/ip_xfrm.h"

namespace {
using namespace knod::xfrm;

constexpr uint32_t kBatch = 256;

const char* const kAead[] = {
    "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128",
    "aead 'rfc4106(gcm(aes))' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
    "aead 'rfc7539esp(chacha20,poly1305)' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
};

SaConfig sa_of(int algo) {
  XfrmConfig c;
  parse_line(std::string("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x10 "
                         "mode tunnel replay-window 4096 flag esn ") +
                 kAead[algo],
             c);
  return c.states[0];
}

void report(benchmark::State& st, const EspBench& x) {
  double bits = double(st.iterations()) * double(x.plain_bytes) * 8;
  st.counters["Gbps"] = benchmark::Counter(bits / 1e9, benchmark::Counter::kIsRate);
}

void knod_encrypt(benchmark::State& st, const char* engine) {
  EspBench x(sa_of(int(st.range(0))), {uint32_t(st.range(1))}, kBatch, engine);
  bool ok = true;
  for (auto _ : st) {
    st.PauseTiming();
    x.reset();
    st.ResumeTiming();
    ok &= x.encrypt();
  }
  if (!ok) st.SkipWithError("drops");
  report(st, x);
}

void knod_decrypt(benchmark::State& st, const char* engine) {
  EspBench x(sa_of(int(st.range(0))), {uint32_t(st.range(1))}, kBatch, engine);
  x.seal();
  bool ok = true;
  for (auto _ : st) {
    st.PauseTiming();
    x.reset();
    st.ResumeTiming();
    ok &= x.decrypt();
  }
  if (!ok) st.SkipWithError("drops");
  report(st, x);
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

/// Raw EVP AEAD on the CryptoOps of the same ESP packets (decrypt: every tag verifies).
void raw_evp(benchmark::State& st, int enc) {
  SaConfig c = sa_of(int(st.range(0)));
  EspBench x(c, {uint32_t(st.range(1))}, kBatch);
  x.seal();
  RawAead raw(c, enc);
  bool ok = true;
  for (auto _ : st) {
    st.PauseTiming();
    x.reset();
    st.ResumeTiming();
    ok &= raw.run(x.ops.data(), kBatch);
  }
  if (!ok) st.SkipWithError("EVP failure");
  report(st, x);
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
