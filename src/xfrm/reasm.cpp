// IPv4/IPv6 reassembly (reasm.h): the checks and their order follow ip_frag_queue
// (net/ipv4/ip_fragment.c), ip6_frag_queue (net/ipv6/reassembly.c) and
// inet_frag_queue_insert (net/ipv4/inet_fragment.c).
#include "xfrm/reasm.h"

#include <algorithm>
#include <cstring>

#include "xfrm/ip.h"
#include "xfrm/ip6_ext.h"

namespace knod::xfrm {
namespace {

constexpr uint16_t kIpMf = 0x2000, kIpOffset = 0x1fff;  // IPv4 frag_off bits (RFC 791 §3.1)
constexpr uint16_t kIp6Mf = 1;                          // IPv6 Fragment header M flag

/// ECN field of a reassembled datagram from the IPFRAG_ECN_* bits seen (1 << ECN of each
/// fragment), as the kernel's ip_frag_ecn_table (RFC 3168 §5.3): CE if any fragment had CE
/// and the others ECT; -1 (drop) when Not-ECT is mixed with ECT or CE; else 0 (unchanged).
int frag_ecn(uint8_t seen) {
  if ((seen & 1) && (seen & 0xe)) return -1;
  return (seen & 8) && (seen & 6) ? 3 : 0;
}

}  // namespace

bool Reassembler::Key::operator<(const Key& o) const {
  if (family != o.family) return family < o.family;
  if (proto != o.proto) return proto < o.proto;
  if (id != o.id) return id < o.id;
  if (int c = std::memcmp(src, o.src, 16)) return c < 0;
  return std::memcmp(dst, o.dst, 16) < 0;
}

/// The kernel's run bookkeeping (inet_frag_queue_insert): a fragment that ends past the last
/// run extends it when it starts exactly at its end, else starts a new run (an overlap if it
/// starts inside); any other fragment is a duplicate when one run holds all of it, an overlap
/// when it touches a run otherwise, and a new run when it touches none.
Reassembler::Insert Reassembler::insert(Queue& q, uint32_t off, uint32_t end) {
  auto& r = q.runs;
  if (r.empty() || r.back().second < end) {
    if (!r.empty() && off < r.back().second) return Insert::kOverlap;
    if (!r.empty() && off == r.back().second)
      r.back().second = end;
    else
      r.emplace_back(off, end);
    return Insert::kOk;
  }
  for (auto& [a, b] : r) {
    if (end <= a || off >= b) continue;
    return off >= a && end <= b ? Insert::kDup : Insert::kOverlap;
  }
  auto at = std::lower_bound(r.begin(), r.end(), std::make_pair(off, end));
  r.insert(at, {off, end});
  return Insert::kOk;
}

void Reassembler::kill(std::map<Key, Queue>::iterator it, uint64_t ReasmStats::*fate) {
  st_[it->first.family == 6].*fate += it->second.frags.size();
  bytes_ -= it->second.meat;
  timers_.erase(it->second.timer);
  q_.erase(it);
}

bool Reassembler::rebuild(const Key& k, const Queue& q, uint8_t* out, uint32_t cap,
                          uint32_t& out_len) {
  int ecn = frag_ecn(q.ecn);
  uint32_t hlen = uint32_t(q.head.size()), total = hlen + q.len;
  // Oversized: IPv4 total length or IPv6 payload length past 65535 (ip_frag_reasm,
  // ip6_frag_reasm "out_oversize").
  if (ecn < 0 || total - (k.family == 6 ? kIpv6Hdr : 0) > 65535 || total > cap) return false;
  std::memcpy(out, q.head.data(), hlen);
  for (const Frag& f : q.frags) std::memcpy(out + hlen + f.off, f.data.data(), f.data.size());
  if (ecn > 0) ip_set_tos(out, uint8_t(ip_tos(out) | ecn));
  if (k.family == 4) {
    st16(out + 2, uint16_t(total));
    st16(out + 6, q.max_df_size == q.max_size ? kIpDf : 0);  // as ip_frag_reasm
    ipv4_set_csum(out);
  } else {
    st16(out + 4, uint16_t(total - kIpv6Hdr));
    out[q.nh_off] = q.nexthdr;
  }
  out_len = total;
  return true;
}

uint32_t Reassembler::expire(uint64_t now_ns) {
  uint32_t n = 0;
  while (!timers_.empty() && timers_.begin()->first <= now_ns) {
    auto it = q_.find(timers_.begin()->second);
    ReasmStats& s = st_[it->first.family == 6];
    ++s.fails, ++s.timeouts, ++n;  // ip_expire / ip6frag_expire_frag_queue count both
    kill(it, &ReasmStats::frags_expired);
  }
  return n;
}

uint32_t Reassembler::expire_all() {
  uint32_t n = 0;
  while (!q_.empty()) {
    ReasmStats& s = st_[q_.begin()->first.family == 6];
    ++s.fails, ++s.timeouts, ++s.flushed, ++n;
    kill(q_.begin(), &ReasmStats::frags_expired);
  }
  return n;
}

ReasmResult Reassembler::push(const uint8_t* ip, uint32_t len, uint64_t now_ns, uint8_t* out,
                              uint32_t out_cap, uint32_t& out_len) {
  expire(now_ns);
  if (len < kIpv4Hdr) return ReasmResult::kNotFragment;
  Key k{};
  uint32_t off, end, data_off, head_len, nh_off = 0;
  uint8_t nexthdr = 0, tos;
  bool mf, df = false;
  if ((ip[0] >> 4) == 4) {
    // Bad headers are not fragments here: the IP layer drops them first (ip_rcv_core).
    uint32_t ihl = (ip[0] & 15) * 4u, tot = ld16(ip + 2);
    uint16_t fo = ld16(ip + 6);
    if (ihl < kIpv4Hdr || tot < ihl || tot > len || (fo & (kIpMf | kIpOffset)) == 0)
      return ReasmResult::kNotFragment;
    ++st_[0].reqds;
    off = (fo & kIpOffset) * 8u, mf = fo & kIpMf, df = fo & kIpDf;
    end = off + (tot - ihl), data_off = head_len = ihl;
    k.family = 4, k.proto = ip[9], k.id = ld16(ip + 4);
    std::memcpy(k.src, ip + 12, 4), std::memcpy(k.dst, ip + 16, 4);
  } else if ((ip[0] >> 4) == 6 && len >= kIpv6Hdr) {
    uint32_t tot = kIpv6Hdr + ld16(ip + 4), foff;
    if (tot > len || ip6_walk_ext(ip, tot, foff, nh_off) != Ip6Walk::kFragment)
      return ReasmResult::kNotFragment;
    ReasmStats& s = st_[1];
    ++s.reqds;
    // ipv6_frag_rcv / ip6_frag_queue header errors: jumbo payload, truncated Fragment header,
    // end past IPV6_MAXPLEN, a non-last fragment not a multiple of 8 bytes (RFC 8200 §4.5).
    uint16_t fo = foff + 8 <= tot ? ld16(ip + foff + 2) : 0;
    off = fo & ~7u, mf = fo & kIp6Mf;
    end = off + (tot - foff - 8);
    if (tot == kIpv6Hdr || foff + 8 > tot || end > 65535 || (mf && (end & 7))) {
      ++s.hdr_errors, ++s.frags_failed;
      return ReasmResult::kDropped;
    }
    nexthdr = ip[foff], data_off = foff + 8, head_len = foff;
    if (off == 0 && !mf) {  // atomic fragment: the packet alone, Fragment header removed
      if (tot - 8 > out_cap) return ++s.fails, ++s.frags_failed, ReasmResult::kDropped;
      ++s.oks, ++s.frags_done;
      std::memcpy(out, ip, foff);
      std::memcpy(out + foff, ip + data_off, tot - data_off);
      st16(out + 4, uint16_t(tot - 8 - kIpv6Hdr));
      out[nh_off] = nexthdr;
      out_len = tot - 8;
      return ReasmResult::kDone;
    }
    k.family = 6, k.id = ld32(ip + foff + 4);
    std::memcpy(k.src, ip + 8, 16), std::memcpy(k.dst, ip + 24, 16);
  } else {
    return ReasmResult::kNotFragment;
  }
  tos = ip_tos(ip);
  ReasmStats& s = st_[k.family == 6];
  auto drop = [&s](uint64_t ReasmStats::*why) {
    ++(s.*why), ++s.frags_failed;
    return ReasmResult::kDropped;
  };
  // inet_frag_find: nothing is queued while above high_thresh (ReasmFails).
  auto it = q_.find(k);
  if (bytes_ > lim_.high_thresh || (it == q_.end() && q_.size() >= lim_.max_queues)) {
    ++s.over_limit;
    return drop(&ReasmStats::fails);
  }
  if (it == q_.end()) {
    it = q_.emplace(k, Queue{}).first;
    Queue& q = it->second;
    q.deadline = now_ns + (k.family == 4 ? lim_.timeout4_ns : lim_.timeout6_ns);
    q.timer = timers_.emplace(q.deadline, k);
  }
  Queue& q = it->second;
  auto discard = [&] {  // the whole datagram ("discard_qp" / "discard_fq")
    kill(it, &ReasmStats::frags_failed);
    return drop(&ReasmStats::fails);
  };
  if (!mf) {
    // The last fragment: bytes beyond its end, or a different end, are corruption.
    if (end < q.len || (q.last && end != q.len)) return discard();
    q.last = true, q.len = end;
  } else {
    end &= ~7u;  // IPv4: a non-last fragment is cut to 8-byte units (IPv6: checked above)
    if (end > q.len) {
      if (q.last) return discard();
      q.len = end;
    }
  }
  if (end == off) return discard();
  switch (insert(q, off, end)) {
    case Insert::kOk:
      break;
    case Insert::kDup:  // dropped alone, the datagram is kept (RFC 5722 erratum 3089)
      return drop(&ReasmStats::duplicates);
    case Insert::kOverlap:  // RFC 5722 §4: the whole datagram is discarded
      ++s.overlaps;
      return discard();
  }
  Frag f{off, end, std::vector<uint8_t>(ip + data_off, ip + data_off + (end - off))};
  q.frags.insert(std::upper_bound(q.frags.begin(), q.frags.end(), off,
                                  [](uint32_t o, const Frag& x) { return o < x.off; }),
                 std::move(f));
  q.meat += end - off, bytes_ += end - off;
  q.ecn |= uint8_t(1u << (tos & 3));
  uint32_t fragsize = end - off + head_len;
  q.max_size = std::max(q.max_size, fragsize);
  if (df) q.max_df_size = std::max(q.max_df_size, fragsize);
  if (off == 0) {
    q.first = true;
    q.head.assign(ip, ip + head_len);
    q.nh_off = nh_off, q.nexthdr = nexthdr;
  }
  if (!q.first || !q.last || q.meat != q.len) return ReasmResult::kHeld;
  bool ok = rebuild(k, q, out, out_cap, out_len);
  ++(ok ? s.oks : s.fails);
  kill(it, ok ? &ReasmStats::frags_done : &ReasmStats::frags_failed);
  return ok ? ReasmResult::kDone : ReasmResult::kDropped;
}

}  // namespace knod::xfrm
