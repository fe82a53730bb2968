// `knod xfrm state|policy add ...`: validate ip-xfrm lines and print what was understood.
// `knod ipsec --xfrm FILE -r IN.pcap -w OUT.pcap [--dir in|out] [--stats F.json] [--engine E]
// [--workers N]`: run the SAs over a capture in batches (outbound: SPD -> ESP encrypt; inbound:
// ESP decrypt after IPv4/IPv6 reassembly; the crypto of a batch on N threads), print per-SA
// counters (as `ip -s xfrm state`) and a table of results.
// Outbound does not fragment: the kernel fragments after ESP only when a packet exceeds the
// path MTU (xfrm_output -> ip_fragment), which a capture has none of.
// Captures: Ethernet (DLT_EN10MB, optional 802.1Q tag) or raw IP (DLT_RAW, IPV4, IPV6).
#include <fmt/core.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file.h"
#include "cli/command.h"
#include "cli/file_roles.h"
#include "io/pcap.h"
#include "xfrm/crypto/engines.h"
#include "xfrm/esp.h"
#include "xfrm/install.h"
#include "xfrm/ip.h"
#include "xfrm/parse/ip_xfrm.h"
#include "xfrm/reasm.h"

namespace {
using namespace knod::xfrm;

/// Re-quotes argv words so the ip-xfrm word splitter sees them as the shell passed them.
std::string join_words(const std::vector<std::string>& w) {
  std::string s = "ip xfrm";
  for (const auto& x : w) s += " '" + x + "'";
  return s;
}

constexpr uint32_t kHeadroom = 256, kStride = 16384, kBatchSize = 256;
/// A packet too large for a batch slot (a reassembled datagram, up to kReasmMaxLen) goes
/// alone in a slot of this size: headroom + packet + ESP tailroom.
constexpr uint32_t kBigStride = kHeadroom + kReasmMaxLen + 128;
/// Snapshot length of the -w output: libpcap's MAXIMUM_SNAPLEN, so that a frame of a
/// kBigStride slot (a reassembled datagram up to 64 KiB plus its link header) is written whole.
constexpr uint32_t kMaxSnaplen = 262144;

struct Frame {
  std::vector<uint8_t> l2;  ///< link header as captured (Ethernet), rewritten ethertype
  timeval ts{};
};

uint64_t ts_ns(const timeval& ts) {
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_usec) * 1000;
}

/// Link types ipsec reads: Ethernet or raw IP.
bool ip_link(int dlt) {
  return dlt == DLT_EN10MB || dlt == DLT_RAW || dlt == DLT_IPV4 || dlt == DLT_IPV6;
}

/// Bytes of link header before the IP header for this link type (ip_link(dlt)).
uint32_t l2_len(int dlt, const uint8_t* p, uint32_t len) {
  if (dlt != DLT_EN10MB) return 0;
  if (len >= 18 && p[12] == 0x81 && p[13] == 0x00) return 18;
  return len >= 14 ? 14 : len;
}

/// True when the Ethernet frame's ethertype (the 2 bytes before the L2 header's end) is
/// IPv4 or IPv6 and the packet after it (`caplen` bytes in all) is of that IP version
/// (xfrm::ip_of_ethertype).
bool ip_ethertype(const uint8_t* p, uint32_t l2, uint32_t caplen) {
  return l2 >= 14 && caplen >= l2 &&
         ip_of_ethertype(uint16_t(p[l2 - 2] << 8 | p[l2 - 1]), p + l2, caplen - l2);
}

struct Run {
  Sad sad;
  Spd spd;
  std::unique_ptr<CryptoEngine> eng;  ///< --engine: openssl, portable, cuda[:N]
  Dir dir = Dir::kOut;
  Counters total;
  uint64_t in_packets = 0, out_packets = 0;
  /// Ethernet frames that are not IPv4/IPv6 (ARP...), or not the IP version their ethertype
  /// names (ip_ethertype): passed unchanged.
  uint64_t not_ip = 0;
  /// Inbound: fragments are held until their datagram is complete (then processed at the
  /// position of its last fragment, as the kernel delivers it), dropped, or timed out.
  Reassembler reasm;
};

void flush(Run& r, std::vector<uint8_t>& frames, std::vector<uint32_t>& off,
           std::vector<uint32_t>& len, std::vector<Frame>& meta, knod::io::PcapWriter* out,
           uint32_t stride = kStride) {
  uint32_t n = uint32_t(meta.size());
  if (!n) return;
  std::vector<uint32_t> sa(n, kNoSaIndex);
  std::vector<uint8_t> drop(n, 0);
  PacketBatch b{n, stride, frames.data(), off.data(), len.data(), drop.data(), sa.data()};
  process_batch(r.sad, r.spd, *r.eng, r.dir, b, r.total);
  for (uint32_t i = 0; i < n; ++i) {
    Drop d = Drop(drop[i]);
    bool pass = d == Drop::kOk || (r.dir == Dir::kOut && d == Drop::kNoPolicy) ||
                (r.dir == Dir::kIn && d == Drop::kNotEsp);
    if (!pass) continue;
    ++r.out_packets;
    if (!out) continue;
    uint8_t* ip = frames.data() + size_t(i) * stride + off[i];
    auto& l2 = meta[i].l2;
    // Ethernet: a transformed packet's ethertype follows its IP version (a tunnel's inner
    // packet may be the other family); a packet passed on is written as captured.
    if (d == Drop::kOk && l2.size() >= 14) {
      uint16_t et = (ip[0] >> 4) == 6 ? 0x86dd : 0x0800;
      l2[l2.size() - 2] = uint8_t(et >> 8), l2[l2.size() - 1] = uint8_t(et);
    }
    std::memcpy(ip - l2.size(), l2.data(), l2.size());
    out->write({ip - l2.size(), len[i] + l2.size()}, ts_ns(meta[i].ts));
  }
  meta.clear();
}

/// Reasons the CLI passes on unchanged (not drops): outbound no policy, inbound not ESP.
bool passed_reason(Dir dir, Drop d) {
  return (dir == Dir::kOut && d == Drop::kNoPolicy) || (dir == Dir::kIn && d == Drop::kNotEsp);
}

/// What `ipsec` counts under the kernel's /proc/net/xfrm_stat names (drop.h xfrm_stat_name).
std::vector<std::pair<std::string, uint64_t>> xfrm_stat(const Counters& c, Dir dir) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (uint32_t d = 1; d < uint32_t(Drop::kCount); ++d) {
    const char* name = xfrm_stat_name(Drop(d), dir == Dir::kIn);
    if (!name) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](auto& p) { return p.first == name; });
    if (it == out.end())
      out.emplace_back(name, c.drops[d]);
    else
      it->second += c.drops[d];
  }
  return out;
}

void print_report(const Run& r) {
  for (uint32_t i = 0; i < r.sad.size(); ++i) {
    const Sa& sa = r.sad[i];
    const Counters& c = sa.stats.c;
    fmt::print("{}\n", format_state(sa.cfg));
    fmt::print("\tstats: replay-window {} replay {} failed {}\n", c[Drop::kTooOld],
               c[Drop::kReplay], c[Drop::kIntegrity]);
    fmt::print("\tlifetime current: {}(bytes), {}(packets)\n", c.bytes, c.packets);
    if (sa.soft_expires || sa.expired)
      fmt::print("\texpire: soft {}(events){}\n", sa.soft_expires.load(),
                 sa.expired ? ", hard: expired" : "");
    if (r.dir == Dir::kOut)
      fmt::print("\tseq 0x{:08x}\n", sa.oseq.load());
    else
      fmt::print("\treplay top 0x{:x} window {}\n", sa.replay.top, sa.cfg.replay_window);
  }
  bool in = r.dir == Dir::kIn;
  fmt::print("\n{:<18} {:>12}   {}\n", "result", "packets", "kernel counter (/proc/net/xfrm_stat)");
  fmt::print("{:<18} {:>12}   ({} bytes)\n", "ok", r.total.packets, r.total.bytes);
  for (uint32_t d = 1; d < uint32_t(Drop::kCount); ++d) {
    if (!r.total.drops[d]) continue;
    const char* k = xfrm_stat_name(Drop(d), in);
    fmt::print("{:<18} {:>12}   {}\n", drop_name(Drop(d)), r.total.drops[d],
               passed_reason(r.dir, Drop(d)) ? "none: passed on unchanged"
               : k                           ? k
                                             : "none");
  }
  if (r.total.soft_expires)
    fmt::print("{:<18} {:>12}   (events, not drops)\n", "soft-expire", r.total.soft_expires);
  if (r.not_ip)
    fmt::print(
        "{:<18} {:>12}   none: not IP (or not its ethertype's version), passed on unchanged\n",
        "not-ip", r.not_ip);
  for (int fam : {4, 6}) {
    const ReasmStats& s = r.reasm.stats(fam);
    if (!s.reqds) continue;
    const char* mib = fam == 4 ? "(/proc/net/snmp Ip:)" : "(/proc/net/snmp6 Ip6)";
    std::string v = fmt::format("ipv{}-", fam);
    fmt::print("{:<18} {:>12}   ReasmReqds {}\n", v + "fragments", s.reqds, mib);
    fmt::print("{:<18} {:>12}   ReasmOKs\n", v + "reassembled", s.oks);
    fmt::print("{:<18} {:>12}   ReasmFails ({} overlap, {} over limit)\n", v + "reasm-failed",
               s.fails, s.overlaps, s.over_limit);
    fmt::print("{:<18} {:>12}   ReasmTimeout ({} incomplete at end of capture)\n",
               v + "reasm-timeout", s.timeouts, s.flushed);
    if (s.hdr_errors)
      fmt::print("{:<18} {:>12}   InHdrErrors\n", v + "frag-hdr-error", s.hdr_errors);
    if (s.duplicates)
      fmt::print("{:<18} {:>12}   none: duplicate fragment\n", v + "frag-dup", s.duplicates);
  }
  fmt::print("{:<18} {:>12}\n{:<18} {:>12}\n", "packets in", r.in_packets, "packets out",
             r.out_packets);
}

nlohmann::json to_json(const Run& r) {
  // drops: by knod's reason; passed: not drops (the packet went on unchanged); xfrm_stat: the
  // same drops under the kernel's counter names.
  auto counters = [&r](const Counters& c) {
    nlohmann::json j = {
        {"packets", c.packets}, {"bytes", c.bytes}, {"soft_expires", c.soft_expires}};
    j["drops"] = nlohmann::json::object();
    j["passed"] = nlohmann::json::object();
    for (uint32_t d = 1; d < uint32_t(Drop::kCount); ++d)
      j[passed_reason(r.dir, Drop(d)) ? "passed" : "drops"][drop_name(Drop(d))] = c.drops[d];
    for (auto& [name, n] : xfrm_stat(c, r.dir)) j["xfrm_stat"][name] = n;
    return j;
  };
  nlohmann::json j = {{"direction", r.dir == Dir::kIn ? "in" : "out"},
                      {"packets_in", r.in_packets},
                      {"packets_out", r.out_packets},
                      {"not_ip", r.not_ip},
                      {"total", counters(r.total)}};
  // Reassembly (inbound), per family, under the kernel's SNMP names; fragment fates add up
  // to ReasmReqds once the capture has ended.
  for (int fam : {4, 6}) {
    const ReasmStats& s = r.reasm.stats(fam);
    j["reasm"][fam == 4 ? "ipv4" : "ipv6"] = {{"ReasmReqds", s.reqds},
                                              {"ReasmOKs", s.oks},
                                              {"ReasmFails", s.fails},
                                              {"ReasmTimeout", s.timeouts},
                                              {"ReasmOverlaps", s.overlaps},
                                              {"InHdrErrors", s.hdr_errors},
                                              {"duplicates", s.duplicates},
                                              {"over_limit", s.over_limit},
                                              {"incomplete_at_end", s.flushed},
                                              {"fragments",
                                               {{"reassembled", s.frags_done},
                                                {"dropped", s.frags_failed},
                                                {"timed_out", s.frags_expired}}}};
  }
  j["sas"] = nlohmann::json::array();
  for (uint32_t i = 0; i < r.sad.size(); ++i) {
    const Sa& sa = r.sad[i];
    nlohmann::json s = counters(sa.stats.c);
    s["spi"] = fmt::format("0x{:08x}", sa.cfg.spi);
    s["src"] = to_string(sa.cfg.src);
    s["dst"] = to_string(sa.cfg.dst);
    s["algorithm"] = cipher_name(sa.cfg.cipher);
    s["soft_expires"] = sa.soft_expires.load();
    s["expired"] = sa.expired.load();
    j["sas"].push_back(s);
  }
  return j;
}

int run_ipsec(const std::string& xfrm, const std::string& in, const std::string& out,
              const std::string& dir, const std::string& stats, const std::string& engine,
              uint32_t workers) {
  Run r;
  r.eng = make_engine(engine, workers);
  r.dir = dir == "in" ? Dir::kIn : Dir::kOut;
  install(parse_file(xfrm), r.sad, r.spd);
  engine_load(*r.eng, r.sad);
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* pin = pcap_open_offline(in.c_str(), err);
  if (!pin) throw knod::Error(fmt::format("ipsec: cannot read '{}': {}", in, err));
  int dlt = pcap_datalink(pin);
  if (!ip_link(dlt)) {  // before any output file exists
    pcap_close(pin);
    throw knod::Error(fmt::format("ipsec: {}: {} not supported: Ethernet or raw IP", in,
                                  knod::io::link_type_text(dlt)));
  }
  // The input's link type and microsecond timestamps, as captured.
  std::optional<knod::io::PcapWriter> writer;
  if (!out.empty()) {
    try {
      writer.emplace(out, kMaxSnaplen, false, dlt);  // a reassembled 64 KiB datagram whole
    } catch (const knod::Error& e) {
      pcap_close(pin);
      throw knod::Error(fmt::format("ipsec: {}", e.what()));
    }
  }
  knod::io::PcapWriter* dump = writer ? &*writer : nullptr;
  std::vector<uint8_t> frames(size_t(kBatchSize) * kStride);
  std::vector<uint32_t> off(kBatchSize), len(kBatchSize);
  std::vector<Frame> meta;
  std::vector<uint8_t> whole(kReasmMaxLen);  // a datagram reassembled from fragments
  std::vector<uint8_t> big;                  // a one-slot batch of kBigStride bytes
  std::vector<uint32_t> big_off(1), big_len(1);
  std::vector<Frame> big_meta;
  pcap_pkthdr* h;
  const u_char* data;
  int rc;
  uint64_t oversize = 0;
  while ((rc = pcap_next_ex(pin, &h, &data)) == 1) {
    ++r.in_packets;
    uint32_t l2 = l2_len(dlt, data, h->caplen);
    uint32_t ilen = h->caplen - l2;
    if (dlt == DLT_EN10MB && !ip_ethertype(data, l2, h->caplen)) {  // ARP...: xfrm never sees
      flush(r, frames, off, len, meta, dump);                       // (keeps the capture's order)
      ++r.not_ip, ++r.out_packets;
      if (dump) dump->write({data, h->caplen}, ts_ns(h->ts), h->len);
      continue;
    }
    const u_char* ipd = data + l2;
    if (r.dir == Dir::kIn) {
      const uint64_t now = ts_ns(h->ts);
      switch (r.reasm.push(ipd, ilen, now, whole.data(), kReasmMaxLen, ilen)) {
        case ReasmResult::kNotFragment:
          break;
        case ReasmResult::kHeld:
        case ReasmResult::kDropped:  // counted in r.reasm's stats
          continue;
        case ReasmResult::kDone:  // goes on with the last fragment's link header and time
          ipd = whole.data();
          break;
      }
    }
    if (ilen + kHeadroom + 128 > kStride) {
      if (ilen + kHeadroom + 128 > kBigStride) {
        ++oversize;
        continue;
      }
      flush(r, frames, off, len, meta, dump);  // keeps the capture's order
      big.resize(kBigStride);
      std::memcpy(big.data() + kHeadroom, ipd, ilen);
      big_off[0] = kHeadroom, big_len[0] = ilen;
      big_meta.push_back(Frame{std::vector<uint8_t>(data, data + l2), h->ts});
      flush(r, big, big_off, big_len, big_meta, dump, kBigStride);
      continue;
    }
    uint32_t i = uint32_t(meta.size());
    std::memcpy(frames.data() + size_t(i) * kStride + kHeadroom, ipd, ilen);
    off[i] = kHeadroom, len[i] = ilen;
    meta.push_back(Frame{std::vector<uint8_t>(data, data + l2), h->ts});
    if (meta.size() == kBatchSize) flush(r, frames, off, len, meta, dump);
  }
  flush(r, frames, off, len, meta, dump);
  r.reasm.expire_all();  // never completed: counted as the kernel's timeouts would be
  std::string perr = rc == -1 ? pcap_geterr(pin) : "";
  pcap_close(pin);
  if (dump) {  // pcap_dump buffers: a full disk shows at the flush
    try {
      dump->close();
    } catch (const knod::Error& e) {
      throw knod::Error(fmt::format("ipsec: {}", e.what()));
    }
  }
  r.total[Drop::kTooBig] += oversize;
  print_report(r);
  if (!perr.empty())  // as knod run: the packets before the damage were processed; exit 3
    fmt::print(stderr,
               "knod: warning: {} (the capture '{}' is cut short; the packets before it "
               "were processed)\n",
               perr, in);
  if (!stats.empty()) knod::write_file(stats, to_json(r).dump(2) + "\n");
  return perr.empty() ? 0 : 3;
}

}  // namespace

KNOD_COMMAND(xfrm) {
  auto* c = app.add_subcommand(
      "xfrm", "Check `ip xfrm state|policy add ...` (or `-f FILE`) and print what was understood");
  c->prefix_command();
  c->callback([set_action, c] {
    auto words = c->remaining();
    // `knod xfrm ip xfrm state add ...` as well as `knod xfrm state add ...`.
    if (words.size() >= 2 && words[0] == "ip" && words[1] == "xfrm")
      words.erase(words.begin(), words.begin() + 2);
    set_action([words] {
      XfrmConfig cfg;
      if (words.size() == 2 && words[0] == "-f")
        cfg = parse_file(words[1]);
      else if (words.size() == 1 && words[0].find(' ') != std::string::npos)
        parse_line(words[0], cfg);  // the whole line quoted as one argument
      else if (words.empty())
        throw knod::Error("xfrm: expected `state add ...`, `policy add ...` or `-f FILE`");
      else
        parse_line(join_words(words), cfg);
      Sad sad;  // add/update rules: a duplicate `state add` fails as in the kernel
      Spd spd;
      install(cfg, sad, spd);
      for (const auto& s : cfg.states) fmt::print("state {}\n", format_state(s));
      for (const auto& p : cfg.policies) fmt::print("policy {}\n", format_policy(p));
      return 0;
    });
  });
}

KNOD_COMMAND(ipsec) {
  auto* c = app.add_subcommand(
      "ipsec", "Run IPsec ESP SAs over a capture (encrypt: --dir out, decrypt: --dir in)");
  struct Opts {
    std::string xfrm, in, out, dir = "out", stats, engine = "openssl";
    uint32_t workers = 0;
  };
  auto o = std::make_shared<Opts>();
  c->add_option("--xfrm", o->xfrm, "File of `ip xfrm state/policy add` lines")->required();
  c->add_option("-r,--read", o->in, "Input capture (Ethernet or raw IP)")->required();
  c->add_option("-w,--write", o->out, "Output capture: processed and passed-through packets");
  c->add_option("--dir", o->dir, "out: SPD + encrypt; in: decrypt")
      ->check(CLI::IsMember({"in", "out"}));
  c->add_option("--stats", o->stats, "Write counters as JSON");
  c->add_option("--engine", o->engine, "Crypto engine: openssl (default), portable, cuda[:N]");
  c->add_option("--workers", o->workers,
                "CPU threads for the crypto of each batch (default: all cores); parsing, "
                "sequence numbers and the replay window stay in packet order, so the output "
                "does not depend on it")
      ->check(CLI::Range(1u, 1024u));
  c->callback([set_action, o] {
    set_action([o] {
      knod::cli::check_file_roles({{"--xfrm", o->xfrm}, {"-r", o->in}},
                                  {{"-w", o->out}, {"--stats", o->stats}});
      return run_ipsec(o->xfrm, o->in, o->out, o->dir, o->stats, o->engine, o->workers);
    });
  });
}
