// The crypto stage over worker threads (xfrm/crypto/threaded_engine.h over device::CpuDevice): a
// batch run with 1 thread and with N threads gives the same output bytes, drop reasons, counters
// and SA state (sequence numbers, replay window), and both give the known answers (RFC 7634
// Appendix A, draft-mcgrew-gcm-test-01, round trip to the original packets).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "util.h"
#include "vectors.h"
#include "xfrm/crypto/engines.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/crypto/threaded_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

/// Workers and ops per claim; chunk 1..16 with min_ops/min_bytes 0 forces every batch, however
/// small, through the pool (the defaults would run the short test batches inline).
struct Threads {
  uint32_t workers, chunk;
};
void PrintTo(const Threads& t, std::ostream* os) {
  *os << t.workers << " workers, chunk " << t.chunk;
}

std::unique_ptr<CryptoEngine> threaded(Threads t) {
  std::vector<std::unique_ptr<CryptoEngine>> v;
  for (uint32_t w = 0; w < t.workers; ++w) v.push_back(std::make_unique<OpensslEngine>());
  return std::make_unique<ThreadedEngine>(std::move(v), ThreadedOptions{0, 0, t.chunk});
}

std::vector<uint64_t> flat(const Counters& c) {
  std::vector<uint64_t> v{c.packets, c.bytes, c.soft_expires};
  v.insert(v.end(), std::begin(c.drops), std::end(c.drops));
  return v;
}

/// Everything a batch leaves behind: packets, verdicts, counters and the SAs' state.
struct Snapshot {
  std::vector<Bytes> pkts;
  Bytes drop;
  std::vector<uint32_t> sa;
  std::vector<uint64_t> total;
  std::vector<std::vector<uint64_t>> sa_stats, sa_state;

  Snapshot(const TestBatch& b, const Sad& sad, const Counters& c)
      : drop(b.drop), sa(b.sa), total(flat(c)) {
    for (uint32_t i = 0; i < b.b.count; ++i) pkts.push_back(b.packet(i));
    for (uint32_t i = 0; i < sad.size(); ++i) {
      const Sa& s = sad[i];
      sa_stats.push_back(flat(s.stats.c));
      std::vector<uint64_t> st{s.oseq.load(),        s.replay.top,     s.replay.window,
                               s.replay.words,       s.expired.load(), s.dying.load(),
                               s.soft_expires.load()};
      st.insert(st.end(), std::begin(s.replay.ring), std::end(s.replay.ring));
      sa_state.push_back(st);
    }
  }
};

void expect_same(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.drop, b.drop);
  EXPECT_EQ(a.sa, b.sa);
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.sa_stats, b.sa_stats);
  EXPECT_EQ(a.sa_state, b.sa_state);
  ASSERT_EQ(a.pkts.size(), b.pkts.size());
  for (size_t i = 0; i < a.pkts.size(); ++i) EXPECT_EQ(a.pkts[i], b.pkts[i]) << "packet " << i;
}

class XfrmThreads : public ::testing::TestWithParam<Threads> {};

// --- Known answers: RFC 7634 Appendix A and draft-mcgrew-gcm-test-01 in one inbound batch ---

/// One SA per vector (distinct dst, so equal SPIs do not clash), replay-window 64 (ESN for
/// the 64-bit vectors), window top just below the vector's sequence number.
struct KnownAnswers {
  Sad sad;
  std::vector<Bytes> packets, plains;  // per SA: the ESP packet and the packet it decrypts to
  std::vector<uint64_t> seqs;

  KnownAnswers() {
    for (size_t k = 0; k < std::size(kMcGrewCases); ++k) {
      const McGrew& v = kMcGrewCases[k];
      bool esn = std::string(v.seq).size() == 16;
      uint64_t seq = std::stoull(v.seq, nullptr, 16);
      std::string dst = "192.0.2." + std::to_string(10 + k);
      std::string khex;
      for (uint8_t b : hex(v.key)) khex += fmt::format("{:02x}", b);
      Sa& sa =
          sad.add(state("ip xfrm state add src 192.0.2.1 dst " + dst + " proto esp spi 0x" + v.spi +
                        " mode transport replay-window 64 " + (esn ? "flag esn " : "") +
                        "aead 'rfc4106(gcm(aes))' 0x" + khex + " 128"));
      replay_init(sa.replay, 64, seq - 1);
      packets.push_back(ipv4("192.0.2.1", dst.c_str(), kProtoEsp, hex(v.packet)));
      Bytes plain = hex(v.plain);
      uint8_t padlen = plain[plain.size() - 2], nh = plain.back();
      plains.push_back(
          ipv4("192.0.2.1", dst.c_str(), nh, Bytes(plain.begin(), plain.end() - 2 - padlen)));
      seqs.push_back(seq);
    }
    // RFC 7634 Appendix A (tunnel, ChaCha20-Poly1305, seq 5), with a 32-packet window.
    Sa& sa = sad.add(state(std::string(Rfc7634::kState) + " replay-window 32"));
    replay_init(sa.replay, 32, 4);
    packets.push_back(ipv4("203.0.113.1", "203.0.113.2", kProtoEsp, Rfc7634::esp()));
    plains.push_back(Rfc7634::inner());
    seqs.push_back(5);
  }
};

/// Per SA, round robin over the SAs: a copy with one ICV bit flipped (kIntegrity, must not
/// advance the window), the packet (kOk), the same packet again (kReplay: one copy accepted).
Snapshot known_answer_batch(CryptoEngine& eng, KnownAnswers& ka) {
  engine_load(eng, ka.sad);
  std::vector<Bytes> in;
  for (int kind = 0; kind < 3; ++kind)
    for (const Bytes& p : ka.packets) {
      in.push_back(p);
      if (kind == 0) in.back().back() ^= 0x01;
    }
  // Order: tampered(SA0..n), then originals, then duplicates; each SA's three in that order.
  TestBatch b(in);
  Counters c;
  esp_decrypt_batch(ka.sad, eng, b.b, c);
  return Snapshot(b, ka.sad, c);
}

void expect_known_answers(const Snapshot& s, const KnownAnswers& ka) {
  const size_t n = ka.packets.size();
  ASSERT_EQ(s.pkts.size(), 3 * n);
  for (size_t k = 0; k < n; ++k) {
    EXPECT_EQ(Drop(s.drop[k]), Drop::kIntegrity) << "SA " << k;
    EXPECT_EQ(Drop(s.drop[n + k]), Drop::kOk) << "SA " << k;
    EXPECT_EQ(s.pkts[n + k], ka.plains[k]) << "SA " << k;
    EXPECT_EQ(Drop(s.drop[2 * n + k]), Drop::kReplay) << "SA " << k;
    EXPECT_EQ(s.sa_state[k][1], ka.seqs[k]) << "window top of SA " << k;
    EXPECT_EQ(s.sa_stats[k][0], 1u) << "SA " << k;
  }
  EXPECT_EQ(s.total[0], n);
  EXPECT_EQ(s.total[3 + uint32_t(Drop::kIntegrity)], n);
  EXPECT_EQ(s.total[3 + uint32_t(Drop::kReplay)], n);
}

TEST_P(XfrmThreads, KnownAnswerInboundBatchMatchesOneThread) {
  KnownAnswers ka1, kan;
  OpensslEngine one;
  Snapshot s1 = known_answer_batch(one, ka1);
  auto eng = threaded(GetParam());
  Snapshot sn = known_answer_batch(*eng, kan);
  expect_known_answers(s1, ka1);
  expect_known_answers(sn, kan);
  expect_same(s1, sn);
}

// --- Several SAs (GCM, ChaCha20-Poly1305, CBC+HMAC, ESN across 2^32, 32-bit overflow) ---

const char* const kSas[] = {
    "ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x201 mode transport "
    "replay-window 64 aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128",
    "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x202 mode tunnel "
    "replay-window 64 aead 'rfc7539esp(chacha20,poly1305)' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
    "ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x203 mode transport "
    "replay-window 32 enc 'cbc(aes)' 0x000102030405060708090a0b0c0d0e0f auth-trunc "
    "'hmac(sha256)' 0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 128",
    "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x204 mode tunnel "
    "replay-window 128 flag esn aead 'rfc4106(gcm(aes))' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
    "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x205 mode tunnel "
    "replay-window 64 aead 'rfc4106(gcm(aes))' 0x0f0e0d0c0b0a09080706050403020100a0a1a2a3 128",
};
constexpr uint32_t kNumSas = 5, kCbcSa = 2;
// First sequence numbers: SA 3 (ESN) crosses 2^32 in the batch, SA 4 (32-bit) overflows.
constexpr uint64_t kOseq[kNumSas] = {0, 0, 0, 0xfffffff5ull, 0xfffffff0ull};
constexpr uint32_t kOutPackets = 150;

struct OutRun {
  Sad sad;
  std::vector<Bytes> in;  // the plaintext packets
  TestBatch b;
  Counters c;
  static std::vector<Bytes> packets() {
    std::vector<Bytes> v;
    for (uint32_t i = 0; i < kOutPackets; ++i) {
      Bytes p = ipv4("10.0.0.1", "10.0.0.2", kProtoUdp,
                     udp(uint16_t(1000 + i), 2000, counting((i * 37) % 1400, uint8_t(i))));
      if (i % 17 == 5) p[0] = 0x75;  // not IPv4/IPv6: kMalformed, takes no sequence number
      v.push_back(p);
    }
    return v;
  }
  OutRun() : in(packets()), b(in) {
    for (uint32_t s = 0; s < kNumSas; ++s) sad.add(state(kSas[s])).oseq = kOseq[s];
    for (uint32_t i = 0; i < kOutPackets; ++i) b.sa[i] = i % 23 == 7 ? kNoSaIndex : i % kNumSas;
  }
  Snapshot run(CryptoEngine& eng) {
    engine_load(eng, sad);
    esp_encrypt_batch(sad, eng, b.b, c);
    return Snapshot(b, sad, c);
  }
};

/// The sequence numbers esp_encrypt_batch must hand out: per SA, in packet order, one per
/// packet that can be encapsulated (RFC 4303 §3.3.3); past 2^32 - 1 without ESN: kSeqOverflow.
void expect_outbound(const Snapshot& s, const std::vector<Bytes>& in) {
  uint64_t next[kNumSas];
  for (uint32_t k = 0; k < kNumSas; ++k) next[k] = kOseq[k] + 1;
  uint32_t ok = 0;
  for (uint32_t i = 0; i < kOutPackets; ++i) {
    Drop d = Drop(s.drop[i]);
    if (i % 23 == 7) {
      EXPECT_EQ(d, Drop::kNoSa) << i;
      continue;
    }
    if (i % 17 == 5) {
      EXPECT_EQ(d, Drop::kMalformed) << i;
      continue;
    }
    uint32_t k = i % kNumSas;
    uint64_t seq = next[k]++;
    if (k == 4 && seq > 0xffffffffull) {
      EXPECT_EQ(d, Drop::kSeqOverflow) << i;
      continue;
    }
    ASSERT_EQ(d, Drop::kOk) << i << " " << drop_name(d);
    ++ok;
    const Bytes& p = s.pkts[i];
    ASSERT_GE(p.size(), 28u);
    EXPECT_EQ(p[9], kProtoEsp);
    EXPECT_EQ(ld32(&p[20]), 0x201u + k);
    EXPECT_EQ(ld32(&p[24]), uint32_t(seq)) << "packet " << i;
    EXPECT_GT(p.size(), in[i].size());
  }
  EXPECT_EQ(s.total[0], ok);
  // SA 4 (no ESN) stops at 2^32 - 1, as the kernel's oseq (xfrm_replay_overflow).
  for (uint32_t k = 0; k < kNumSas; ++k)
    EXPECT_EQ(s.sa_state[k][0],
              k == 4 ? std::min<uint64_t>(next[k] - 1, 0xffffffffull) : next[k] - 1)
        << "oseq " << k;
}

TEST_P(XfrmThreads, OutboundBatchMatchesOneThread) {
  OutRun r1, rn;
  OpensslEngine one;
  auto eng = threaded(GetParam());
  Snapshot s1 = r1.run(one), sn = rn.run(*eng);
  expect_outbound(s1, r1.in);
  expect_outbound(sn, rn.in);
  EXPECT_EQ(s1.drop, sn.drop);
  EXPECT_EQ(s1.sa, sn.sa);
  EXPECT_EQ(s1.total, sn.total);
  EXPECT_EQ(s1.sa_stats, sn.sa_stats);
  EXPECT_EQ(s1.sa_state, sn.sa_state);
  for (uint32_t i = 0; i < kOutPackets; ++i) {
    ASSERT_EQ(s1.pkts[i].size(), sn.pkts[i].size()) << i;
    if (s1.sa[i] == kCbcSa && s1.drop[i] == 0) {
      // CBC IVs are random (RAND_bytes, RFC 3602 §3): the headers up to the IV are equal;
      // the rest is checked by decrypting (InboundBatchMatchesOneThread).
      EXPECT_TRUE(std::equal(s1.pkts[i].begin(), s1.pkts[i].begin() + 28, sn.pkts[i].begin()));
    } else {
      EXPECT_EQ(s1.pkts[i], sn.pkts[i]) << "packet " << i;
    }
  }
}

/// Inbound SAs for OutRun's packets: window tops just below the first sequence numbers.
void inbound_sad(Sad& sad) {
  for (uint32_t s = 0; s < kNumSas; ++s) {
    Sa& sa = sad.add(state(kSas[s]));
    replay_init(sa.replay, sa.cfg.replay_window, kOseq[s]);
  }
}

/// What the inbound batch holds, per entry: the outbound packet index and how it was made.
enum class Kind { kOriginal, kTampered, kDuplicate, kLate, kBadSpi };
struct Entry {
  uint32_t pkt;
  Kind kind;
};

std::vector<Entry> inbound_entries(const Snapshot& out) {
  std::vector<Entry> e;
  uint32_t j = 0;
  for (uint32_t i = 0; i < kOutPackets; ++i) {
    if (out.drop[i] != 0) continue;
    if (j % 7 == 3) e.push_back({i, Kind::kTampered});  // before the original
    e.push_back({i, Kind::kOriginal});
    if (j % 5 == 1) e.push_back({i, Kind::kDuplicate});
    if (j % 11 == 4) e.push_back({i, Kind::kBadSpi});
    ++j;
  }
  for (uint32_t i = 0; i < kOutPackets && e.size() < 200; ++i)  // earlier packets, again
    if (out.drop[i] == 0 && i % 3 == 0) e.push_back({i, Kind::kLate});
  return e;
}

Snapshot inbound_run(CryptoEngine& eng, const Snapshot& out, const std::vector<Entry>& es,
                     Sad& sad) {
  engine_load(eng, sad);
  std::vector<Bytes> in;
  for (const Entry& e : es) {
    Bytes p = out.pkts[e.pkt];
    if (e.kind == Kind::kTampered) p[p.size() - 3] ^= 0x40;  // inside the ICV
    if (e.kind == Kind::kBadSpi) p[23] ^= 0x80;              // SPI low byte
    in.push_back(p);
  }
  TestBatch b(in);
  Counters c;
  esp_decrypt_batch(sad, eng, b.b, c);
  return Snapshot(b, sad, c);
}

/// Every original is accepted once and gives the plaintext packet back; the rest is dropped
/// with its reason.
void expect_inbound(const Snapshot& s, const std::vector<Entry>& es, const std::vector<Bytes>& in) {
  uint64_t ok = 0;
  for (size_t k = 0; k < es.size(); ++k) {
    Drop d = Drop(s.drop[k]);
    switch (es[k].kind) {
      case Kind::kOriginal:
        EXPECT_EQ(d, Drop::kOk) << k << " " << drop_name(d);
        EXPECT_EQ(s.pkts[k], in[es[k].pkt]) << "entry " << k;
        ++ok;
        break;
      case Kind::kTampered:
        EXPECT_EQ(d, Drop::kIntegrity) << k;
        break;
      case Kind::kDuplicate:
      case Kind::kLate:
        EXPECT_TRUE(d == Drop::kReplay || d == Drop::kTooOld) << k << " " << drop_name(d);
        break;
      case Kind::kBadSpi:
        EXPECT_EQ(d, Drop::kUnknownSpi) << k;
        break;
    }
  }
  EXPECT_EQ(s.total[0], ok);
}

TEST_P(XfrmThreads, InboundBatchMatchesOneThread) {
  OutRun r1, rn;
  OpensslEngine one_out;
  auto eng_out = threaded(GetParam());
  Snapshot out1 = r1.run(one_out), outn = rn.run(*eng_out);
  std::vector<Entry> es = inbound_entries(out1);
  ASSERT_GT(es.size(), 150u);
  // The 1-thread outbound packets through 1 and N threads: same everything.
  Sad sad1, sadn;
  inbound_sad(sad1), inbound_sad(sadn);
  OpensslEngine one_in;
  auto eng_in = threaded(GetParam());
  Snapshot in1 = inbound_run(one_in, out1, es, sad1);
  Snapshot inn = inbound_run(*eng_in, out1, es, sadn);
  expect_inbound(in1, es, r1.in);
  expect_inbound(inn, es, r1.in);
  expect_same(in1, inn);
  // ESN window of SA 3 went past 2^32: top = the last sequence number sent.
  EXPECT_EQ(in1.sa_state[3][1], out1.sa_state[3][0]);
  EXPECT_GT(in1.sa_state[3][1], 0xffffffffull);
  // The N-thread outbound packets (CBC with other IVs) decrypt to the same plaintexts.
  Sad sad2;
  inbound_sad(sad2);
  OpensslEngine one_in2;
  Snapshot in2 = inbound_run(one_in2, outn, inbound_entries(outn), sad2);
  expect_inbound(in2, inbound_entries(outn), rn.in);
  EXPECT_EQ(in2.total, in1.total);
  EXPECT_EQ(in2.sa_state, in1.sa_state);
}

// --- The engine alone: every transform, fixed IVs, bit for bit ---

TEST_P(XfrmThreads, EngineOpsBitIdenticalForEveryTransform) {
  XfrmConfig cfg = parse_file(std::string(KNOD_XFRM_EXAMPLES) + "/all_algorithms.conf");
  Sad sad;
  for (const SaConfig& c : cfg.states) sad.add(c);
  const uint32_t n = 300, nsa = uint32_t(sad.size());
  std::vector<Bytes> pkts;
  for (uint32_t i = 0; i < n; ++i)
    pkts.push_back(ipv4("10.0.0.1", "10.0.0.2", kProtoUdp,
                        udp(7, 9, counting(20 + (i * 53) % 1300, uint8_t(i)))));
  TestBatch b(pkts);
  std::vector<CryptoOp> ops(n);
  for (uint32_t i = 0; i < n; ++i) {
    const SaConfig& c = sad[i % nsa].cfg;
    ASSERT_EQ(esp_out_prepare(c, i % nsa, i + 1, b.frames.data() + size_t(i) * b.kStride, b.kStride,
                              b.off[i], b.len[i], ops[i]),
              Drop::kOk);
    if (!c.aead())
      for (uint32_t j = 0; j < c.iv_len(); ++j) ops[i].iv[j] = uint8_t(i * 3 + j);
  }
  // Ops point into b.frames: run the same ops on two copies by rebasing the pointers.
  Bytes plain = b.frames, frames2 = b.frames;
  auto rebase = [&](std::vector<CryptoOp> v, uint8_t* base) {
    for (CryptoOp& op : v)
      for (uint8_t** p : {&op.iv, &op.data, &op.aad2, &op.auth, &op.icv})
        if (*p) *p = base + (*p - b.frames.data());
    return v;
  };
  std::vector<CryptoOp> ops2 = rebase(ops, frames2.data());
  OpensslEngine one;
  engine_load(one, sad);
  auto eng = threaded(GetParam());
  engine_load(*eng, sad);
  one.encrypt(ops.data(), n);
  eng->encrypt(ops2.data(), n);
  EXPECT_EQ(b.frames, frames2);
  EXPECT_NE(b.frames, plain);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(ops[i].ok, 1) << i;
    EXPECT_EQ(ops2[i].ok, 1) << i;
  }
  // Decrypt in place with every 9th ICV flipped: the same ok flags (0 exactly there) and
  // bytes; the others are the plaintext again.
  for (uint32_t i = 0; i < n; i += 9) ops[i].icv[0] ^= 1, ops2[i].icv[0] ^= 1;
  one.decrypt(ops.data(), n);
  eng->decrypt(ops2.data(), n);
  EXPECT_EQ(b.frames, frames2);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(ops[i].ok, i % 9 != 0) << i;
    EXPECT_EQ(ops2[i].ok, ops[i].ok) << i;
    if (i % 9 == 0 || !ops[i].len) continue;
    size_t at = size_t(ops[i].data - b.frames.data());
    EXPECT_TRUE(
        std::equal(b.frames.begin() + at, b.frames.begin() + at + ops[i].len, plain.begin() + at))
        << "op " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, XfrmThreads,
                         ::testing::Values(Threads{2, 1}, Threads{4, 3}, Threads{3, 16},
                                           Threads{4, 0}),
                         [](const auto& p) {
                           return "w" + std::to_string(p.param.workers) + "_chunk" +
                                  std::to_string(p.param.chunk);
                         });

// --- Defaults, the factory, and the pool ---

TEST(XfrmThreadsFactory, MakeEngineWorkers) {
  auto one = make_engine("openssl", 1);
  EXPECT_STREQ(one->name(), "openssl");
  EXPECT_NE(dynamic_cast<OpensslEngine*>(one.get()), nullptr);
  auto four = make_engine("openssl", 4);
  EXPECT_STREQ(four->name(), "openssl");
  auto* t = dynamic_cast<ThreadedEngine*>(four.get());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->workers(), 4u);
  auto all = make_engine("portable", 0);  // all cores
  EXPECT_STREQ(all->name(), "portable");
  EXPECT_THROW(make_engine("nope", 4), Error);
}

/// The default thresholds: a full batch of 1420-byte packets goes to the workers, and the
/// result is the one-thread result.
TEST(XfrmThreadsFactory, DefaultEngineFullBatchMatchesOneThread) {
  const char* line =
      "ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x301 mode transport "
      "replay-window 64 aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128";
  std::vector<Bytes> pkts;
  for (uint32_t i = 0; i < 256; ++i)
    pkts.push_back(ipv4("10.0.0.1", "10.0.0.2", kProtoUdp, udp(1, 2, counting(1392, uint8_t(i)))));
  std::unique_ptr<Snapshot> snap[2];
  for (uint32_t w : {1u, 4u}) {
    Sad sad;
    sad.add(state(line));
    auto eng = make_engine("openssl", w);
    engine_load(*eng, sad);
    TestBatch b(pkts);
    for (uint32_t i = 0; i < 256; ++i) b.sa[i] = 0;
    Counters c;
    esp_encrypt_batch(sad, *eng, b.b, c);
    EXPECT_EQ(c.packets, 256u);
    Sad in;
    in.add(state(line));
    engine_load(*eng, in);  // same ids: the in-SA replaces the out-SA in the engine
    std::vector<Bytes> esp;
    for (uint32_t i = 0; i < 256; ++i) esp.push_back(b.packet(i));
    TestBatch d(esp);
    Counters cd;
    esp_decrypt_batch(in, *eng, d.b, cd);
    EXPECT_EQ(cd.packets, 256u);
    for (uint32_t i = 0; i < 256; ++i) EXPECT_EQ(d.packet(i), pkts[i]) << i;
    snap[w == 4] = std::make_unique<Snapshot>(b, sad, c);
  }
  expect_same(*snap[0], *snap[1]);
}

/// Each inner engine is only ever called from one thread (its EVP contexts are not shared),
/// and every op is run exactly once.
class RecordingEngine final : public CryptoEngine {
 public:
  const char* name() const override { return "recording"; }
  void add_sa(uint32_t, const SaConfig&) override {}
  void encrypt(CryptoOp* ops, uint32_t n) override { record(ops, n); }
  void decrypt(CryptoOp* ops, uint32_t n) override { record(ops, n); }
  std::thread::id owner;
  bool shared = false;

 private:
  void record(CryptoOp* ops, uint32_t n) {
    if (owner == std::thread::id())
      owner = std::this_thread::get_id();
    else if (owner != std::this_thread::get_id())
      shared = true;
    for (uint32_t i = 0; i < n; ++i) ++ops[i].ok;
  }
};

TEST(XfrmThreadsPool, EachEngineStaysOnOneThreadAndEveryOpRunsOnce) {
  std::vector<std::unique_ptr<CryptoEngine>> v;
  std::vector<RecordingEngine*> rec;
  for (int w = 0; w < 4; ++w) {
    auto e = std::make_unique<RecordingEngine>();
    rec.push_back(e.get());
    v.push_back(std::move(e));
  }
  ThreadedEngine eng(std::move(v), ThreadedOptions{0, 0, 2});
  std::vector<CryptoOp> ops(1000);
  for (int round = 0; round < 50; ++round) {
    for (auto& op : ops) op.ok = 0;
    uint32_t n = 1 + uint32_t(round * 97 % 1000);
    round % 2 ? eng.encrypt(ops.data(), n) : eng.decrypt(ops.data(), n);
    for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(ops[i].ok, i < n ? 1 : 0) << round << " " << i;
  }
  EXPECT_EQ(rec[0]->owner, std::this_thread::get_id());  // worker 0 is the caller
  for (RecordingEngine* r : rec) EXPECT_FALSE(r->shared);
}

TEST(XfrmThreadsPool, DefaultThresholdsRunSmallVectorsInline) {
  std::vector<std::unique_ptr<CryptoEngine>> v;
  std::vector<RecordingEngine*> rec;
  for (int w = 0; w < 3; ++w) {
    auto e = std::make_unique<RecordingEngine>();
    rec.push_back(e.get());
    v.push_back(std::move(e));
  }
  ThreadedEngine eng(std::move(v));
  std::vector<CryptoOp> ops(31);
  for (auto& op : ops) op.len = 4096;  // heavy, but fewer than min_ops = 32
  eng.encrypt(ops.data(), 31);
  std::vector<CryptoOp> light(200);
  for (auto& op : light) op.len = 64;  // many, but 12800 bytes < min_bytes = 16384
  eng.decrypt(light.data(), 200);
  EXPECT_EQ(rec[0]->owner, std::this_thread::get_id());
  EXPECT_EQ(rec[1]->owner, std::thread::id());
  EXPECT_EQ(rec[2]->owner, std::thread::id());
  for (auto& op : ops) EXPECT_EQ(op.ok, 1);
  for (auto& op : light) EXPECT_EQ(op.ok, 1);
}

}  // namespace
}  // namespace knod::xfrm
