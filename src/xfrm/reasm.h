// IPv4 and IPv6 fragment reassembly for the inbound path, as the kernel does before xfrm
// input: IPv4 ip_local_deliver -> ip_defrag (net/ipv4/ip_fragment.c), IPv6 the Fragment
// header handler ipv6_frag_rcv (net/ipv6/reassembly.c), both on net/ipv4/inet_fragment.c.
// RFC 791 §3.2 (IPv4 reassembly), RFC 8200 §4.5 (IPv6), RFC 5722 (overlaps drop the whole
// datagram; Linux does the same for IPv4), RFC 3168 §5.3 (ECN of fragments).
// Host code: a queue per datagram being reassembled, fragments held by copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace knod::xfrm {

/// Largest datagram reassembly can produce, in bytes: IPv4 total length <= 65535; IPv6 40 +
/// payload length <= 65535 (IPV6_MAXPLEN; jumbograms are not fragmented, RFC 2675 §3).
constexpr uint32_t kReasmMaxLen = 40 + 65535;

/// Bounds, the kernel's sysctl defaults unless noted.
struct ReasmLimits {
  uint64_t timeout4_ns = 30'000'000'000;  ///< net.ipv4.ipfrag_time: 30 s from the first fragment
  uint64_t timeout6_ns = 60'000'000'000;  ///< net.ipv6.ip6frag_time: 60 s
  /// Fragment data held (bytes, payloads; the kernel counts skb truesize): while above it,
  /// every fragment is dropped (ipfrag_high_thresh / ip6frag_high_thresh, 4 MiB).
  uint64_t high_thresh = 4u << 20;
  uint32_t max_queues = 4096;  ///< datagrams in reassembly at once (knod's bound, not the kernel's)
};

/// Counters of one family. The first five are the kernel's SNMP MIB names (RFC 4293
/// ipSystemStatsReasm*; /proc/net/snmp "Ip:" for IPv4, /proc/net/snmp6 "Ip6..." for IPv6).
/// Fragment fates add up: reqds == frags_done + frags_failed + frags_expired + held.
struct ReasmStats {
  uint64_t reqds = 0;          ///< ReasmReqds: fragments received (atomic IPv6 fragments included)
  uint64_t oks = 0;            ///< ReasmOKs: datagrams reassembled
  uint64_t fails = 0;          ///< ReasmFails: datagrams given up (timeouts included) + fragments
                               ///< dropped over the limits
  uint64_t timeouts = 0;       ///< ReasmTimeout: datagrams not complete within the timeout
  uint64_t overlaps = 0;       ///< ReasmOverlaps: datagrams dropped for an overlapping fragment
  uint64_t hdr_errors = 0;     ///< InHdrErrors: bad IPv6 fragments (length not a multiple of 8
                               ///< but M set, end past 65535, truncated Fragment header)
  uint64_t duplicates = 0;     ///< fragments dropped: all their bytes already held (not a fail)
  uint64_t over_limit = 0;     ///< fragments dropped: high_thresh or max_queues (in fails too)
  uint64_t frags_done = 0;     ///< fragments in reassembled datagrams
  uint64_t frags_failed = 0;   ///< fragments dropped: alone or with their datagram
  uint64_t frags_expired = 0;  ///< fragments in datagrams that timed out
  uint64_t flushed = 0;        ///< of timeouts: datagrams still incomplete at expire_all()
};

/// What push() did with a packet.
enum class ReasmResult : uint8_t {
  kNotFragment,  ///< not an IP fragment (or not parseable as one): process it as it is
  kHeld,         ///< fragment queued; its datagram is not complete yet
  kDone,         ///< the datagram is complete, rebuilt in `out`
  kDropped,      ///< the fragment was dropped (counted in stats)
};

/// Reassembles IPv4 and IPv6 datagrams from their fragments, with the kernel's rules:
/// key (src, dst, Identification, protocol) for IPv4, (src, dst, Identification) for IPv6;
/// a fragment contained in bytes already held is a duplicate and dropped alone; any other
/// overlap drops the whole datagram; a datagram not complete `timeout` ns after its first
/// fragment arrived is dropped. Not thread-safe.
class Reassembler {
 public:
  explicit Reassembler(ReasmLimits lim = {}) : lim_(lim) {}

  /// Offers the IP packet `ip` (`len` bytes, link header removed) that arrived at `now_ns`
  /// (any clock in ns, e.g. capture timestamps; queues due by then expire first).
  /// kDone: the datagram is in `out` (`out_len` bytes; needs `out_cap` >= its size, at most
  /// kReasmMaxLen, else counted in fails): IPv4 with the first fragment's header, MF and
  /// offset cleared (DF as ip_frag_reasm), total length and checksum fixed; IPv6 with the
  /// first fragment's unfragmentable part, the Fragment header removed, payload length and
  /// the Next Header before it fixed. Both with the fragments' ECN (RFC 3168 §5.3).
  /// An atomic IPv6 fragment (offset 0, M 0; RFC 8200 §4.5, RFC 6946) is kDone alone.
  ReasmResult push(const uint8_t* ip, uint32_t len, uint64_t now_ns, uint8_t* out, uint32_t out_cap,
                   uint32_t& out_len);
  /// Drops the datagrams whose timeout ended at or before `now_ns` (ReasmTimeout);
  /// returns how many.
  uint32_t expire(uint64_t now_ns);
  /// Drops every datagram still in reassembly as timed out (end of input: the kernel would
  /// let them time out) and counts them in `flushed` too; returns how many.
  uint32_t expire_all();

  /// Counters of IPv4 (`family` 4) or IPv6 (6).
  const ReasmStats& stats(int family) const { return st_[family == 6]; }
  size_t queues() const { return q_.size(); }  ///< datagrams in reassembly
  uint64_t bytes() const { return bytes_; }    ///< fragment bytes held

 private:
  struct Key {
    uint8_t family, proto;
    uint32_t id;
    uint8_t src[16], dst[16];
    bool operator<(const Key& o) const;
  };
  struct Frag {
    uint32_t off, end;  ///< bytes of the fragmentable part
    std::vector<uint8_t> data;
  };
  struct Queue {
    uint64_t deadline = 0;
    std::vector<uint8_t> head;   ///< first fragment: IPv4 header / IPv6 unfragmentable part
    uint32_t nh_off = 0;         ///< IPv6: offset of the Next Header byte naming the Fragment hdr
    uint8_t nexthdr = 0;         ///< IPv6: the first fragment's Fragment header Next Header
    uint32_t len = 0, meat = 0;  ///< datagram payload bytes: known end, bytes held
    bool first = false, last = false;
    uint8_t ecn = 0;                                  ///< IPFRAG_ECN_* bits seen (1 << ECN field)
    uint32_t max_size = 0, max_df_size = 0;           ///< IPv4: largest fragment, largest with DF
    std::vector<Frag> frags;                          ///< sorted by off
    std::vector<std::pair<uint32_t, uint32_t>> runs;  ///< contiguous runs, sorted (kernel's)
    std::multimap<uint64_t, Key>::iterator timer;
  };
  enum class Insert { kOk, kDup, kOverlap };
  static Insert insert(Queue& q, uint32_t off, uint32_t end);
  void kill(std::map<Key, Queue>::iterator it, uint64_t ReasmStats::*fate);
  bool rebuild(const Key& k, const Queue& q, uint8_t* out, uint32_t cap, uint32_t& out_len);

  ReasmLimits lim_;
  ReasmStats st_[2];
  std::map<Key, Queue> q_;
  std::multimap<uint64_t, Key> timers_;  ///< deadline -> datagram
  uint64_t bytes_ = 0;
};

}  // namespace knod::xfrm
