// Batch drivers: prepare every packet, one engine call, finish every packet (VPP style).
#include <openssl/rand.h>

#include <vector>

#include "xfrm/esp.h"
#include "xfrm/ip.h"

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

bool limit_hit(const SaConfig& c, uint64_t packets, uint64_t bytes) {
  return (c.limits.packet_hard && packets >= c.limits.packet_hard) ||
         (c.limits.byte_hard && bytes >= c.limits.byte_hard);
}

}  // namespace

void engine_load(CryptoEngine& eng, const Sad& sad) {
  for (uint32_t i = 0; i < sad.size(); ++i) eng.add_sa(i, sad[i].cfg);
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
    uint64_t pk = sa.out_packets.fetch_add(1) + 1;
    uint64_t by = sa.out_bytes.fetch_add(b.data_len[i]) + b.data_len[i];
    if (limit_hit(sa.cfg, pk - 1, by - b.data_len[i])) {
      b.drop[i] = uint8_t(Drop::kLimit);
      continue;
    }
    uint64_t seq = sa.oseq.fetch_add(1) + 1;  // RFC 4303 §3.3.3: never cycle
    if ((!sa.cfg.esn() && seq > 0xffffffffull) || seq == 0) {
      b.drop[i] = uint8_t(Drop::kSeqOverflow);
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
      uint8_t* u = ip + kIpv6Hdr;
      st16(u + 6, udp6_csum(ip, u, b.data_len[i] - kIpv6Hdr));
    }
  }
  for (uint32_t i = 0; i < b.count; ++i) {
    Drop d = Drop(b.drop[i]);
    bool has_sa = b.sa[i] != kNoSaIndex && b.sa[i] < sad.size();
    if (d == Drop::kOk)
      ++stats.packets, stats.bytes += b.data_len[i];
    else
      ++stats[d];
    if (has_sa) {
      Sa& sa = sad[b.sa[i]];
      SaLock lock(sa);
      if (d == Drop::kOk)
        ++sa.stats.c.packets, sa.stats.c.bytes += b.data_len[i];
      else
        ++sa.stats.c[d];
    }
  }
}

void esp_decrypt_batch(Sad& sad, CryptoEngine& eng, PacketBatch& b, Counters& stats) {
  Scratch& s = scratch;
  s.reserve(b.count);
  s.batch_top.assign(sad.size(), 0);
  uint32_t n = 0;
  for (uint32_t i = 0; i < b.count; ++i) {
    uint8_t* slot = b.frames + size_t(i) * b.stride;
    if (i + 1 < b.count) __builtin_prefetch(slot + b.stride + b.data_off[i + 1]);
    Sa* sa = nullptr;
    Drop d = esp_in_prepare(sad, slot, b.data_off[i], b.data_len[i], sa, s.st[n], s.ops[n],
                            s.batch_top.data());
    b.sa[i] = sa ? sa->index : kNoSaIndex;
    b.drop[i] = uint8_t(d);
    if (d == Drop::kOk) s.sas[n] = sa, s.idx[n++] = i;
  }
  eng.decrypt(s.ops.data(), n);
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t i = s.idx[k];
    Sa& sa = *s.sas[k];
    SaLock lock(sa);
    uint32_t in_len = b.data_len[i];
    Drop d = esp_in_finish(sa, b.frames + size_t(i) * b.stride, b.data_off[i], b.data_len[i],
                           s.st[k], s.ops[k]);
    b.drop[i] = uint8_t(d);
    if (d == Drop::kOk) ++sa.stats.c.packets, sa.stats.c.bytes += in_len;
  }
  for (uint32_t i = 0; i < b.count; ++i) {
    Drop d = Drop(b.drop[i]);
    if (d == Drop::kOk)
      ++stats.packets, stats.bytes += b.data_len[i];
    else
      ++stats[d];
    if (d != Drop::kOk && b.sa[i] != kNoSaIndex) {
      Sa& sa = sad[b.sa[i]];
      SaLock lock(sa);
      ++sa.stats.c[d];
    }
  }
}

void process_batch(Sad& sad, const Spd& spd, CryptoEngine& eng, Dir dir, PacketBatch& b,
                   Counters& stats) {
  if (dir == Dir::kIn) return esp_decrypt_batch(sad, eng, b, stats);
  for (uint32_t i = 0; i < b.count; ++i) {
    b.sa[i] = kNoSaIndex;
    b.drop[i] = uint8_t(Drop::kOk);
    const uint8_t* p = b.frames + size_t(i) * b.stride + b.data_off[i];
    uint32_t len = b.data_len[i];
    FlowKey k;
    uint32_t h = 0;
    if (len >= kIpv4Hdr && (p[0] >> 4) == 4) {
      k.src.family = k.dst.family = 4;
      std::memcpy(k.src.bytes, p + 12, 4);
      std::memcpy(k.dst.bytes, p + 16, 4);
      k.proto = p[9];
      h = (p[0] & 15) * 4u;
    } else if (len >= kIpv6Hdr && (p[0] >> 4) == 6) {
      k.src.family = k.dst.family = 6;
      std::memcpy(k.src.bytes, p + 8, 16);
      std::memcpy(k.dst.bytes, p + 24, 16);
      k.proto = p[6];
      h = kIpv6Hdr;
    } else {
      b.drop[i] = uint8_t(Drop::kMalformed);
      continue;
    }
    if ((k.proto == 6 || k.proto == 17) && len >= h + 4)
      k.sport = ld16(p + h), k.dport = ld16(p + h + 2);
    const Policy* pol = spd.lookup(Dir::kOut, k);
    if (!pol || !pol->has_tmpl) {
      b.drop[i] = uint8_t(Drop::kNoPolicy);
      continue;
    }
    const Tmpl& t = pol->tmpl;
    Sa* sa = t.spi
                 ? sad.find(t.spi, t.dst, t.proto)
                 : sad.find_tmpl(t.mode == Mode::kTunnel ? t.src : Addr{},
                                 t.mode == Mode::kTunnel ? t.dst : k.dst, t.proto, t.mode, t.reqid);
    if (pol->action == Action::kBlock || !sa) {
      b.drop[i] = uint8_t(Drop::kNoSa);
      continue;
    }
    b.sa[i] = sa->index;
  }
  esp_encrypt_batch(sad, eng, b, stats);
}

}  // namespace knod::xfrm
