// Batch drivers: prepare every packet, one engine call, finish every packet (VPP style).
//
// Who touches what (no data race by construction):
//  - prepare (serial, caller thread, packet order): SAD lookup, outbound sequence numbers and
//    lifetime shares (esp_out_admit), CBC IVs (RAND_bytes), the inbound window pre-check and
//    batch_top; writes each packet's headers and its CryptoOp.
//  - crypto (one engine call; a ThreadedEngine splits it over worker threads, each with its
//    own EVP contexts): op k reads/writes only packet k's bytes and ops[k].ok. No SA state.
//  - finish (serial, caller thread, packet order, SA lock held over a run of its packets): the
//    window re-check and advance, lifetime, ICV verdict, decapsulation, counters.
// So the result does not depend on the number of crypto threads (tests/xfrm/test_threads.cpp).
#include <openssl/rand.h>

#include <vector>

#include "xfrm/esp.h"
#include "xfrm/ip.h"
#include "xfrm/ip6_ext.h"

namespace knod::xfrm {
namespace {

/// Scratch reused across batches by this thread (grows only; no per-packet allocation).
struct Scratch {
  std::vector<CryptoOp> ops;
  std::vector<uint32_t> idx;
  std::vector<PktState> st;
  std::vector<Sa*> sas;
  std::vector<uint64_t> batch_top;
  void reserve(uint32_t n) {
    if (ops.size() < n) ops.resize(n), idx.resize(n), st.resize(n), sas.resize(n);
  }
};
thread_local Scratch scratch;

struct SaLock {
  Sa& sa;
  explicit SaLock(Sa& s) : sa(s) {
    while (sa.lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SaLock() { sa.lock.clear(std::memory_order_release); }
};

/// The kernel's inbound policy check on a decrypted packet (__xfrm_policy_check): the SA's
/// own selector, then the best `dir in` policy: block, or a template the SA must satisfy
/// (a tunnel-mode SA needs one). No `dir in` policy matches: a tunnel-mode SA's packet is
/// dropped (XfrmInNoPols, secpath_has_nontransport), a transport-mode one accepted. Only when
/// the SPD has `dir in` policies: knod also runs SA-only and outbound-only configurations,
/// where the kernel would drop every tunnel-mode packet (docs/ARCHITECTURE.md, xfrm).
Drop in_policy_check(const Spd* spd, const SaConfig& sa, const uint8_t* ip, uint32_t len) {
  if ((!spd || !spd->size()) && sa.sel.src.addr.family == 0 && sa.sel.dst.addr.family == 0 &&
      !sa.sel.proto && !sa.sel.sport && !sa.sel.dport)
    return Drop::kOk;  // nothing to check
  FlowKey k;
  if (!flow_key(ip, len, k)) return Drop::kOk;
  if (!selector_match(sa.sel, k)) return Drop::kStateMismatch;
  if (!spd || !spd->size()) return Drop::kOk;
  const Policy* pol = spd->lookup(Dir::kIn, k);
  if (!pol) return sa.mode == Mode::kTunnel && spd->count(Dir::kIn) ? Drop::kNoPols : Drop::kOk;
  if (pol->action == Action::kBlock) return Drop::kPolBlock;
  if (pol->has_tmpl ? !tmpl_match(pol->tmpl, sa) : sa.mode == Mode::kTunnel)
    return Drop::kTmplMismatch;
  return Drop::kOk;
}

/// A packet that is not IPsec (no secpath) against the `dir in` policies, as
/// __xfrm_policy_check: a block policy drops it (XfrmInPolBlock); an allow policy with a
/// template requires IPsec (xfrm_policy_ok fails on the empty secpath: XfrmInTmplMismatch;
/// knod parses no optional `level use` templates). IKE (UDP 500 / 4500) passes, as the IKE
/// daemon's sockets bypass policy. kNotEsp: handed on unchanged.
Drop clear_policy_check(const Spd& spd, const uint8_t* ip, uint32_t len) {
  FlowKey k;
  if (!flow_key(ip, len, k)) return Drop::kNotEsp;
  const auto ike = [](uint16_t port) { return port == 500 || port == 4500; };
  if (k.proto == kProtoUdp && (ike(k.sport) || ike(k.dport))) return Drop::kNotEsp;
  const Policy* pol = spd.lookup(Dir::kIn, k);
  if (!pol) return Drop::kNotEsp;
  if (pol->action == Action::kBlock) return Drop::kPolBlock;
  return pol->has_tmpl ? Drop::kTmplMismatch : Drop::kNotEsp;
}

}  // namespace

void engine_load(CryptoEngine& eng, const Sad& sad) {
  for (uint32_t i = 0; i < sad.size(); ++i) eng.add_sa(i, sad[i].cfg);
}

Drop esp_out_admit(Sa& sa, uint32_t len, Counters& stats, uint64_t* seq) {
  uint64_t pk = sa.out_packets.fetch_add(1);
  uint64_t by = sa.out_bytes.fetch_add(len);
  bool soft;
  if (!lifetime_admit(sa, pk, by, soft)) return Drop::kLimit;
  stats.soft_expires += soft;
  // xfrm_replay_overflow(): the counter stops at its last value (2^32 - 1, or 2^64 - 1 with
  // ESN); the packet that would wrap it is dropped and the counter is not advanced.
  const uint64_t last = sa.cfg.esn() ? UINT64_MAX : 0xffffffffull;
  uint64_t cur = sa.oseq.load(std::memory_order_relaxed);
  do {
    if (cur >= last) return Drop::kSeqOverflow;
  } while (!sa.oseq.compare_exchange_weak(cur, cur + 1, std::memory_order_relaxed));
  *seq = cur + 1;
  return Drop::kOk;
}

void esp_encrypt_batch(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats) {
  Scratch& s = scratch;
  s.reserve(b.count);
  uint32_t n = 0;
  for (uint32_t i = 0; i < b.count; ++i) {
    if (b.sa[i] == kNoSaIndex || b.sa[i] >= sad.size()) {
      if (b.drop[i] == uint8_t(Drop::kOk)) b.drop[i] = uint8_t(Drop::kNoSa);
      continue;
    }
    Sa& sa = sad[b.sa[i]];
    uint8_t* slot = b.frames + size_t(i) * b.stride;
    if (i + 1 < b.count) __builtin_prefetch(slot + b.stride + b.data_off[i + 1]);
    // A packet that cannot be encapsulated takes no sequence number and no lifetime share.
    if (Drop d = esp_out_check(sa.cfg, slot, b.stride, b.data_off[i], b.data_len[i]);
        d != Drop::kOk) {
      b.drop[i] = uint8_t(d);
      continue;
    }
    uint64_t seq = 0;
    if (Drop d = esp_out_admit(sa, b.data_len[i], stats, &seq); d != Drop::kOk) {
      b.drop[i] = uint8_t(d);
      continue;
    }
    Drop d = esp_out_prepare(sa.cfg, sa.index, seq, slot, b.stride, b.data_off[i], b.data_len[i],
                             s.ops[n]);
    b.drop[i] = uint8_t(d);
    if (d != Drop::kOk) continue;
    if (!sa.cfg.aead() && sa.cfg.iv_len()) RAND_bytes(s.ops[n].iv, int(sa.cfg.iv_len()));
    s.idx[n++] = i;
  }
  eng.encrypt(s.ops.data(), n);
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t i = s.idx[k];
    Sa& sa = sad[b.sa[i]];
    if (!s.ops[k].ok) {
      b.drop[i] = uint8_t(Drop::kMalformed);
    } else if (sa.cfg.encap && sa.cfg.src.family == 6) {
      uint8_t* ip = b.frames + size_t(i) * b.stride + b.data_off[i];
      uint32_t uo = ip6_udp_off(ip, b.data_len[i]);
      uint8_t* u = ip + uo;
      st16(u + 6, udp6_csum(ip, u, b.data_len[i] - uo));
    }
  }
  Sa* locked = nullptr;  // an SA's lock is held over a run of its packets
  for (uint32_t i = 0; i < b.count; ++i) {
    Drop d = Drop(b.drop[i]);
    bool has_sa = b.sa[i] != kNoSaIndex && b.sa[i] < sad.size();
    if (d == Drop::kOk)
      ++stats.packets, stats.bytes += b.data_len[i];
    else
      ++stats[d];
    if (has_sa) {
      Sa& sa = sad[b.sa[i]];
      if (locked != &sa) {
        if (locked) locked->lock.clear(std::memory_order_release);
        while (sa.lock.test_and_set(std::memory_order_acquire)) {
        }
        locked = &sa;
      }
      if (d == Drop::kOk)
        ++sa.stats.c.packets, sa.stats.c.bytes += b.data_len[i];
      else
        ++sa.stats.c[d];
    }
  }
  if (locked) locked->lock.clear(std::memory_order_release);
}

namespace {

/// Packets [begin, end) of an inbound batch, prepare, crypto and finish, where `end` is the
/// batch's end or the first packet whose ESN high bits depend on whether the packets before it
/// pass their ICV (esp_in_prepare's `unsettled`). Returns `end`: more than `begin`, since the
/// first packet of a run has nothing before it in the run.
uint32_t esp_decrypt_run(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats,
                         const Spd* spd, uint32_t begin) {
  Scratch& s = scratch;
  // All zero between runs: grown with zeros here, and the run's own SAs reset at its end.
  if (s.batch_top.size() < sad.size()) s.batch_top.resize(sad.size(), 0);
  uint32_t n = 0, end = begin;
  for (; end < b.count; ++end) {
    const uint32_t i = end;
    uint8_t* slot = b.frames + size_t(i) * b.stride;
    if (i + 1 < b.count) __builtin_prefetch(slot + b.stride + b.data_off[i + 1]);
    Sa* sa = nullptr;
    bool unsettled = false;
    Drop d = esp_in_prepare(sad, slot, b.data_off[i], b.data_len[i], sa, s.st[n], s.ops[n],
                            s.batch_top.data(), &unsettled);
    if (unsettled) break;
    if (d == Drop::kNotEsp && spd && spd->count(Dir::kIn))
      d = clear_policy_check(*spd, slot + b.data_off[i], b.data_len[i]);
    b.sa[i] = sa ? sa->index : kNoSaIndex;
    b.drop[i] = uint8_t(d);
    if (d == Drop::kOk) s.sas[n] = sa, s.idx[n++] = i;
  }
  for (uint32_t i = begin; i < end; ++i)  // only packets with an SA moved its batch_top
    if (b.sa[i] != kNoSaIndex) s.batch_top[b.sa[i]] = 0;
  eng.decrypt(s.ops.data(), n);
  // In packet order; an SA's lock is held over a run of its packets (taken once per run).
  Sa* locked = nullptr;
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t i = s.idx[k];
    Sa& sa = *s.sas[k];
    if (locked != &sa) {
      if (locked) locked->lock.clear(std::memory_order_release);
      while (sa.lock.test_and_set(std::memory_order_acquire)) {
      }
      locked = &sa;
    }
    uint32_t in_len = b.data_len[i];
    uint64_t soft = sa.soft_expires.load(std::memory_order_relaxed);
    uint8_t* slot = b.frames + size_t(i) * b.stride;
    Drop d = esp_in_finish(sa, slot, b.data_off[i], b.data_len[i], s.st[k], s.ops[k]);
    stats.soft_expires += sa.soft_expires.load(std::memory_order_relaxed) - soft;
    if (d == Drop::kOk) d = in_policy_check(spd, sa.cfg, slot + b.data_off[i], b.data_len[i]);
    b.drop[i] = uint8_t(d);
    if (d == Drop::kOk) {  // the run's bytes as the SA's: of the ESP packet as it came in
      ++sa.stats.c.packets, sa.stats.c.bytes += in_len;
      ++stats.packets, stats.bytes += in_len;
    }
  }
  if (locked) locked->lock.clear(std::memory_order_release);
  return end;
}

}  // namespace

void esp_decrypt_batch(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats,
                       const Spd* spd) {
  scratch.reserve(b.count);
  // Almost always one run; a forged or stray ESN packet far ahead of the window ends one.
  for (uint32_t begin = 0; begin < b.count;)
    begin = esp_decrypt_run(sad, eng, b, stats, spd, begin);
  for (uint32_t i = 0; i < b.count; ++i) {
    Drop d = Drop(b.drop[i]);
    if (d == Drop::kOk) continue;  // counted above
    ++stats[d];
    if (b.sa[i] != kNoSaIndex) {
      Sa& sa = sad[b.sa[i]];
      SaLock lock(sa);
      ++sa.stats.c[d];
    }
  }
}

void process_batch(Sad& sad, const Spd& spd, CryptoEngine& eng, Dir dir, PacketBatch& b,
                   Counters& stats) {
  if (dir == Dir::kIn) return esp_decrypt_batch(sad, eng, b, stats, &spd);
  for (uint32_t i = 0; i < b.count; ++i) {
    b.sa[i] = kNoSaIndex;
    b.drop[i] = uint8_t(Drop::kOk);
    FlowKey k;
    if (!flow_key(b.frames + size_t(i) * b.stride + b.data_off[i], b.data_len[i], k)) {
      b.drop[i] = uint8_t(Drop::kMalformed);
      continue;
    }
    const Policy* pol = spd.lookup(Dir::kOut, k);
    if (!pol || !pol->has_tmpl) {
      b.drop[i] = uint8_t(Drop::kNoPolicy);
      continue;
    }
    const Tmpl& t = pol->tmpl;
    Sa* sa = t.spi ? sad.find(t.spi, t.dst, t.proto)
                   : sad.find_tmpl(t.mode == Mode::kTunnel ? t.src : Addr{},
                                   t.mode == Mode::kTunnel ? t.dst : k.dst, t.proto, t.mode,
                                   t.reqid, &k);
    if (pol->action == Action::kBlock || !sa) {
      b.drop[i] = uint8_t(Drop::kNoSa);
      continue;
    }
    b.sa[i] = sa->index;
  }
  esp_encrypt_batch(sad, eng, b, stats);
}

}  // namespace knod::xfrm
