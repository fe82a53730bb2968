// The `knod` binary on IPsec: `bench --xfrm` (table shape, errors), `xfrm -f` (duplicate
// `state add` fails like the kernel), `ipsec --stats` (kernel counter names, lifetimes).
// Bad input: one `knod: ...` line on stderr and exit status 1 (tests/cli/README.md).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_test.h"

namespace knod::cli_test {
namespace {

const std::string kEx = KNOD_XFRM_EXAMPLES;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const std::regex kRow(
    R"(^0x([0-9a-f]{8}) +(\S+) +(enc|dec) +(\S+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)% )"
    R"(+([0-9.]+) +([0-9.]+)x$)");

TEST(XfrmBenchCli, TableHasOneRowPerSaDirAndSize) {
  Result r = knod("bench --xfrm " + kEx + "/bench.conf --packets 12 --sizes 64,1420,imix");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto ls = lines(r.out);
  size_t head = 0;
  while (head < ls.size() && ls[head].rfind("spi ", 0) != 0) ++head;
  ASSERT_LT(head, ls.size()) << r.out;
  EXPECT_TRUE(
      std::regex_search(ls[head], std::regex(R"(^spi +alg +dir +size +knod Mpps +knod )"
                                             R"(Gbps +raw Gbps +knod/raw +knod-N Gbps +N/1$)")))
      << ls[head];
  EXPECT_NE(r.out.find("knod-N: the crypto stage of each batch on "), std::string::npos);
  EXPECT_NE(r.out.find("Gbps = plaintext IP packet bytes"), std::string::npos);
  EXPECT_NE(r.out.find("imix = 64/576/1500 B at 7:4:1"), std::string::npos);
  const char* algs[] = {"AES-128-GCM", "AES-256-GCM", "ChaCha20-Poly1305"};
  const char* spis[] = {"00001001", "00001002", "00001003"};
  const char* sizes[] = {"64", "1420", "imix"};
  size_t row = head + 1;
  for (int a = 0; a < 3; ++a)
    for (const char* size : sizes)
      for (const char* dir : {"enc", "dec"}) {
        ASSERT_LT(row, ls.size());
        std::smatch m;
        ASSERT_TRUE(std::regex_match(ls[row], m, kRow)) << ls[row];
        EXPECT_EQ(m[1], spis[a]);
        EXPECT_EQ(m[2], algs[a]);
        EXPECT_EQ(m[3], dir);
        EXPECT_EQ(m[4], size);
        double mpps = std::stod(m[5]), gbps = std::stod(m[6]), raw = std::stod(m[7]);
        double pct = std::stod(m[8]), gbps_n = std::stod(m[9]), scale = std::stod(m[10]);
        EXPECT_GT(mpps, 0);
        EXPECT_GT(raw, 0);
        EXPECT_GT(gbps_n, 0);
        // Every column is rounded to what it prints: half a unit of its last digit each.
        const auto half = [](const std::string& v) {
          const size_t dot = v.find('.');
          return dot == std::string::npos ? 0.5 : 0.5 * std::pow(10.0, -double(v.size() - dot - 1));
        };
        const double eg = half(m[6]), er = half(m[7]), en = half(m[9]);
        EXPECT_NEAR(pct, 100 * gbps / raw,
                    half(m[8]) + 100 * (eg / raw + gbps * er / (raw * raw)) * 1.01);
        EXPECT_NEAR(scale, gbps_n / gbps,
                    half(m[10]) + (en / gbps + gbps_n * eg / (gbps * gbps)) * 1.01);
        if (std::string(size) != "imix") {  // Gbps counts the plaintext bytes of each packet
          EXPECT_NEAR(gbps, mpps * std::stod(size) * 8 / 1000, 0.01 + 0.005 * gbps) << ls[row];
        }
        ++row;
      }
  ASSERT_EQ(row + 1, ls.size()) << r.out;
  EXPECT_TRUE(std::regex_match(
      ls[row],
      std::regex(R"(^min knod/raw at 1420 B: [0-9.]+% \(0x0000100[123] \S+ (enc|dec)\)$)")))
      << ls[row];
}

TEST(XfrmBenchCli, SkipsNonAeadSas) {
  Result r = knod("bench --xfrm " + kEx + "/all_algorithms.conf --packets 4 --sizes 512");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> rows, skipped;
  for (auto& l : lines(r.out)) {
    std::smatch m;
    if (std::regex_match(l, m, kRow)) rows.push_back(std::string(m[1]) + " " + std::string(m[2]));
    if (l.rfind("# skipped spi ", 0) == 0) skipped.push_back(l.substr(14, 10));
  }
  // 0x100 AES-128-GCM (96-bit ICV), 0x101 AES-256-GCM (36-byte keymat), 0x103 ChaCha20-Poly1305:
  // enc + dec.
  EXPECT_EQ(rows,
            (std::vector<std::string>{"00000100 AES-128-GCM", "00000100 AES-128-GCM",
                                      "00000101 AES-256-GCM", "00000101 AES-256-GCM",
                                      "00000103 ChaCha20-Poly1305", "00000103 ChaCha20-Poly1305"}));
  EXPECT_EQ(skipped, (std::vector<std::string>{"0x00000102", "0x00000104", "0x00000105",
                                               "0x00000106", "0x00000107", "0x00000108"}));
  EXPECT_NE(r.out.find("min knod/raw at 512 B: "), std::string::npos);
}

TEST(XfrmBenchCli, BadInputIsOneLine) {
  struct Case {
    std::string args, want;
  } cases[] = {
      {"bench --xfrm /nonexistent/x.conf",
       "knod: /nonexistent/x.conf: cannot open xfrm config (No such file or directory)"},
      {"bench --xfrm " + kEx + "/nat_t.conf",
       "knod: bench: " + kEx +
           "/nat_t.conf: no AEAD SA to measure (want aead rfc4106(gcm(aes)) or "
           "rfc7539esp(chacha20,poly1305))"},
      {"bench --xfrm " + kEx + "/bench.conf --sizes 64,huge",
       "knod: bench: --sizes 'huge': want IP packet sizes 48..1800 or imix"},
  };
  for (auto& c : cases) {
    Result r = knod(c.args);
    EXPECT_EQ(r.rc, 1) << c.args;
    EXPECT_EQ(r.err_lines(), std::vector<std::string>{c.want}) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

const std::string kGcm =
    "proto esp spi 0x10 reqid 1 mode tunnel aead 'rfc4106(gcm(aes))' "
    "0x000102030405060708090a0b0c0d0e0f10111213 128";

TEST(XfrmCli, DuplicateStateAddIsFileExists) {
  std::string d = temp_dir();
  write_file(d + "/dup.conf", "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  "\nip xfrm state add src 192.0.2.9 dst 192.0.2.2 " + kGcm + "\n");
  Result r = knod("xfrm -f " + d + "/dup.conf");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err_lines(),
            std::vector<std::string>{"knod: " + d +
                                     "/dup.conf:2: xfrm: state add src 192.0.2.9 dst 192.0.2.2 "
                                     "proto esp spi 0x00000010: File exists (an SA with this dst, "
                                     "spi and proto is installed; use `state update`)"});
  // `state update` of it is accepted; of a missing SA it is ESRCH.
  write_file(d + "/upd.conf", "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  "\nip xfrm state update src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  " limit packet-hard 5\n");
  r = knod("xfrm -f " + d + "/upd.conf");
  EXPECT_EQ(r.rc, 0) << r.err;
  write_file(d + "/miss.conf", "ip xfrm state update src 192.0.2.1 dst 192.0.2.2 " + kGcm + "\n");
  r = knod("xfrm -f " + d + "/miss.conf");
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("miss.conf:1: xfrm: state update "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No such process"), std::string::npos) << r.err;
}

// `policy add` of a selector and dir already installed is EEXIST in the kernel
// (xfrm_policy_insert, excl); `policy update` replaces it.
TEST(XfrmCli, DuplicatePolicyAddIsFileExists) {
  std::string d = temp_dir();
  const std::string pol = "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out ";
  write_file(d + "/dup.conf", pol + "priority 5\n" + pol + "priority 9\n");
  Result r = knod("xfrm -f " + d + "/dup.conf");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err_lines(), std::vector<std::string>{
                               "knod: " + d +
                               "/dup.conf:2: xfrm: policy add: File exists (a policy with this "
                               "selector and dir is installed; `policy update` replaces it)"});
  // Another dir, another selector, or `policy update`: accepted (Spd.UpdateReplaces).
  write_file(d + "/ok.conf", pol + "\n" +
                                 "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir fwd\n" +
                                 "ip xfrm policy add src 10.1.0.0/16 dst 10.3.0.0/16 dir out\n" +
                                 "ip xfrm policy update src 10.1.0.0/16 dst 10.2.0.0/16 dir out "
                                 "priority 7\n");
  r = knod("xfrm -f " + d + "/ok.conf");
  EXPECT_EQ(r.rc, 0) << r.err;
}

// The line on the command line with or without its `ip xfrm`, or quoted as one argument.
TEST(XfrmCli, CommandLineTakesTheIpXfrmLine) {
  const std::string sa =
      "state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x10 mode tunnel aead "
      "'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128";
  const std::string want =
      "state src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x00000010 reqid 0 mode tunnel "
      "replay-window 0 aead rfc4106(gcm(aes)) (128 bits) icv 128\n";
  for (const std::string& args :
       {"xfrm " + sa, "xfrm ip xfrm " + sa, "xfrm \"ip xfrm " + sa + "\""}) {
    Result r = knod(args);
    EXPECT_EQ(r.rc, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out, want) << args;
  }
}

TEST(XfrmBenchCli, InstallsWithTheKernelRules) {
  // The same file `xfrm -f` refuses is refused by `bench --xfrm`; an updated SA is measured
  // once (its `state add`).
  std::string d = temp_dir();
  write_file(d + "/dup.conf", "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  "\nip xfrm state add src 192.0.2.9 dst 192.0.2.2 " + kGcm + "\n");
  Result r = knod("bench --xfrm " + d + "/dup.conf --packets 4 --sizes 64");
  EXPECT_EQ(r.rc, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("dup.conf:2: xfrm: state add"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File exists"), std::string::npos) << r.err;
  write_file(d + "/upd.conf", "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  "\nip xfrm state update src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                                  " limit packet-hard 5\n");
  r = knod("bench --xfrm " + d + "/upd.conf --packets 4 --sizes 64");
  EXPECT_EQ(r.rc, 0) << r.err;
  size_t rows = 0;
  for (size_t p = r.out.find("\n0x00000010"); p != std::string::npos;
       p = r.out.find("\n0x00000010", p + 1))
    ++rows;
  EXPECT_EQ(rows, 2u) << r.out;  // enc and dec of one SA at one size
}

/// Ethernet + IPv4 frame of `size` bytes from udp_frame, with addresses and protocol set.
std::string frame(size_t size, const uint8_t src[4], const uint8_t dst[4], uint8_t proto = 17) {
  std::string f = udp_frame(size);
  for (int i = 0; i < 4; ++i) f[26 + i] = char(src[i]), f[30 + i] = char(dst[i]);
  f[23] = char(proto);
  return f;
}

TEST(XfrmCli, IpsecStatsUseKernelCounterNames) {
  std::string d = temp_dir();
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 9}, x[4] = {10, 9, 0, 1};
  const uint8_t g1[4] = {192, 0, 2, 1}, g2[4] = {192, 0, 2, 2};
  write_file(d + "/sa.conf",
             "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm +
                 " limit packet-soft 1 limit packet-hard 2\n"
                 "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out tmpl src 192.0.2.1 "
                 "dst 192.0.2.2 proto esp reqid 1 mode tunnel\n");
  // Outbound: 3 packets the policy covers (soft expire on the 2nd, hard on the 3rd), 1 not.
  write_file(d + "/out.pcap",
             pcap_bytes(1, {frame(80, a, b), frame(80, a, b), frame(80, a, b), frame(80, x, b)}));
  Result r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/out.pcap --dir out --stats " + d +
                  "/out.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(read_file(d + "/out.json"));
  EXPECT_EQ(j["total"]["packets"], 2);
  EXPECT_EQ(j["total"]["soft_expires"], 1);
  EXPECT_EQ(j["total"]["passed"]["no-policy"], 1);
  EXPECT_FALSE(j["total"]["drops"].contains("no-policy"));
  EXPECT_EQ(j["total"]["drops"]["expired"], 1);
  EXPECT_EQ(j["total"]["xfrm_stat"]["XfrmOutStateExpired"], 1);
  EXPECT_EQ(j["total"]["xfrm_stat"]["XfrmOutNoStates"], 0);
  EXPECT_EQ(j["sas"][0]["soft_expires"], 1);
  EXPECT_EQ(j["sas"][0]["expired"], true);
  EXPECT_NE(r.out.find("XfrmOutStateExpired"), std::string::npos) << r.out;
  // Inbound: an ESP packet for an unknown SPI, a non-ESP packet (passed on).
  write_file(d + "/in.pcap", pcap_bytes(1, {frame(80, g1, g2, 50), frame(80, a, b)}));
  r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/in.pcap --dir in --stats " + d +
           "/in.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = nlohmann::json::parse(read_file(d + "/in.json"));
  EXPECT_EQ(j["total"]["xfrm_stat"]["XfrmInNoStates"], 1);
  EXPECT_EQ(j["total"]["drops"]["unknown-spi"], 1);
  EXPECT_EQ(j["total"]["passed"]["not-esp"], 1);
  EXPECT_EQ(j["total"]["xfrm_stat"]["XfrmInStateSeqError"], 0);
}

/// IPv4 fragment of the Ethernet frame `f` (14 + 20-byte header): payload bytes [off, off+n).
std::string frag_of(const std::string& f, size_t off, size_t n, bool mf, uint16_t id) {
  std::string g = f.substr(0, 34) + f.substr(34 + off, n);
  g[16] = char((20 + n) >> 8), g[17] = char((20 + n) & 0xff);
  g[18] = char(id >> 8), g[19] = char(id & 0xff);
  g[20] = char((mf ? 0x20 : 0) | (off / 8) >> 8), g[21] = char((off / 8) & 0xff);
  return g;
}

/// Sets the IPv4 header checksum of Ethernet frame `f` (RFC 1071).
void fix_csum(std::string& f) {
  f[24] = f[25] = 0;
  uint32_t sum = 0;
  for (size_t i = 14; i < 34; i += 2) sum += (uint8_t(f[i]) << 8) | uint8_t(f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  f[24] = char((~sum >> 8) & 0xff), f[25] = char(~sum & 0xff);
}

/// Records of a pcap file (after the 24-byte header): (ts seconds, frame bytes).
std::vector<std::pair<uint32_t, std::string>> records(const std::string& pcap) {
  std::vector<std::pair<uint32_t, std::string>> out;
  auto u32 = [&](size_t i) {
    return uint32_t(uint8_t(pcap[i])) | uint32_t(uint8_t(pcap[i + 1])) << 8 |
           uint32_t(uint8_t(pcap[i + 2])) << 16 | uint32_t(uint8_t(pcap[i + 3])) << 24;
  };
  for (size_t i = 24; i + 16 <= pcap.size();) {
    uint32_t n = u32(i + 8);
    out.emplace_back(u32(i), pcap.substr(i + 16, n));
    i += 16 + n;
  }
  return out;
}

/// The AES-GCM tunnel SA 192.0.2.1 -> 192.0.2.2 (with `extra` words) and its outbound policy
/// for 10.1.0.0/16 -> 10.2.0.0/16.
std::string tunnel_conf(const std::string& extra) {
  return "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm + extra +
         "\n"
         "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out tmpl src 192.0.2.1 "
         "dst 192.0.2.2 proto esp reqid 1 mode tunnel\n";
}

/// Inbound: a frame that is not ESP goes out as captured, and so does one whose IP version
/// nibble and ethertype disagree (the output used to take the ethertype from the nibble), ESP
/// or not: the kernel's ip_rcv / ipv6_rcv drop it before xfrm (helper-53: an IPv4 ESP packet
/// under 0x86dd was decrypted and relabelled 0x0800). The run's bytes are its SAs' bytes, those
/// of the ESP packets as received (IP header included).
TEST(XfrmCli, IpsecInboundPassesOthersAsCapturedAndCountsEspBytes) {
  std::string d = temp_dir();
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 9};
  write_file(d + "/sa.conf", tunnel_conf(""));
  write_file(d + "/plain.pcap", pcap_bytes(1, {frame(80, a, b), frame(300, a, b)}));
  Result r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/plain.pcap -w " + d +
                  "/esp.pcap --dir out");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto esp = records(read_file(d + "/esp.pcap"));
  ASSERT_EQ(esp.size(), 2u);
  // Ethertype 0x0800, version nibble 6: an IPv6 header (payload 26 bytes, next header UDP).
  std::string odd = frame(80, a, b);
  odd[14] = 0x60, odd[18] = 0, odd[19] = 26, odd[20] = 17;
  // The second ESP packet under ethertype 0x86dd, before the packet itself: if it were
  // decrypted, the packet after it would be a replay.
  std::string esp6 = esp[1].second;
  esp6[12] = char(0x86), esp6[13] = char(0xdd);
  write_file(d + "/in.pcap", pcap_bytes(1, {esp[0].second, odd, esp6, esp[1].second}));
  r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/in.pcap -w " + d +
           "/out.pcap --dir in --stats " + d + "/in.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(read_file(d + "/in.json"));
  EXPECT_EQ(j["total"]["packets"], 2);
  EXPECT_EQ(j["not_ip"], 2);
  EXPECT_EQ(j["total"]["passed"]["not-esp"], 0);
  EXPECT_EQ(j["total"]["drops"]["replay"], 0);
  const uint64_t esp_bytes = esp[0].second.size() - 14 + esp[1].second.size() - 14;
  EXPECT_EQ(j["total"]["bytes"], esp_bytes);
  ASSERT_EQ(j["sas"].size(), 1u);
  EXPECT_EQ(j["sas"][0]["bytes"], esp_bytes);
  auto out = records(read_file(d + "/out.pcap"));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].second == frame(80, a, b));
  EXPECT_TRUE(out[1].second == odd);
  EXPECT_TRUE(out[2].second == esp6);
  EXPECT_TRUE(out[3].second == frame(300, a, b));
}

/// `ipsec --dir in` reassembles IPv4 fragments first (ip_defrag): the datagram goes on at
/// its last fragment's position and time; a fragment whose datagram never completes is
/// counted (ReasmTimeout, incomplete at the end of the capture), not lost silently.
TEST(XfrmCli, IpsecInboundReassemblesFragments) {
  std::string d = temp_dir();
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 9};
  write_file(d + "/sa.conf", "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 " + kGcm + "\n");
  std::string whole = frame(200, a, b), plain = frame(90, b, a);
  whole[18] = 0x12, whole[19] = 0x34;  // Identification 0x1234
  fix_csum(whole);
  // Payload 166 bytes: [0, 96) with MF, then [96, 166); a lone first fragment of 0x99.
  std::string f1 = frag_of(whole, 0, 96, true, 0x1234), f2 = frag_of(whole, 96, 70, false, 0x1234);
  std::string lone = frag_of(whole, 0, 48, true, 0x99);
  write_file(d + "/in.pcap", pcap_bytes(1, {f2, lone, f1, plain}));
  Result r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/in.pcap -w " + d +
                  "/out.pcap --dir in --stats " + d + "/in.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto recs = records(read_file(d + "/out.pcap"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].first, 1700000002u);  // the time of f1, the last fragment to arrive
  EXPECT_TRUE(recs[0].second == whole);   // frag_off 0, total length 186, checksum fixed
  EXPECT_EQ(recs[1].first, 1700000003u);
  EXPECT_TRUE(recs[1].second == plain);
  auto j = nlohmann::json::parse(read_file(d + "/in.json"));
  auto& v4 = j["reasm"]["ipv4"];
  EXPECT_EQ(v4["ReasmReqds"], 3);
  EXPECT_EQ(v4["ReasmOKs"], 1);
  EXPECT_EQ(v4["ReasmFails"], 1);
  EXPECT_EQ(v4["ReasmTimeout"], 1);
  EXPECT_EQ(v4["incomplete_at_end"], 1);
  EXPECT_EQ(v4["fragments"]["reassembled"], 2);
  EXPECT_EQ(v4["fragments"]["timed_out"], 1);
  EXPECT_EQ(j["reasm"]["ipv6"]["ReasmReqds"], 0);
  EXPECT_EQ(j["packets_in"], 4);
  EXPECT_EQ(j["packets_out"], 2);
  EXPECT_EQ(j["total"]["passed"]["not-esp"], 2);  // the reassembled datagram and `plain`
  EXPECT_EQ(j["total"]["drops"]["malformed"], 0);
  EXPECT_NE(r.out.find("ipv4-fragments"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ReasmTimeout (1 incomplete at end of capture)"), std::string::npos)
      << r.out;
  // Outbound leaves fragments alone (the kernel reassembles only what it delivers locally).
  r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/in.pcap --dir out --stats " + d +
           "/out.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = nlohmann::json::parse(read_file(d + "/out.json"));
  EXPECT_EQ(j["reasm"]["ipv4"]["ReasmReqds"], 0);
  EXPECT_EQ(j["packets_out"], 4);
}

/// `ipsec --workers N`: the crypto of each batch on N threads; the capture, the counters and
/// the SA state printed are the same as with 1 (outbound AES-GCM IVs are the sequence numbers,
/// so the ESP bytes are deterministic), and the ESP capture decrypts back the same way.
TEST(XfrmCli, IpsecWorkersDoNotChangeTheResult) {
  std::string d = temp_dir();
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 9};
  write_file(d + "/sa.conf", tunnel_conf(" replay-window 32"));
  std::vector<std::string> frames;
  for (int i = 0; i < 300; ++i) frames.push_back(frame(200 + (i * 41) % 1200, a, b));
  write_file(d + "/plain.pcap", pcap_bytes(1, frames));
  std::string out[2], in[2], js_out[2], js_in[2];
  for (int w : {0, 1}) {
    std::string tag = w ? "3" : "1";
    Result r =
        knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/plain.pcap -w " + d + "/esp" + tag +
             ".pcap --dir out --workers " + tag + " --stats " + d + "/o" + tag + ".json");
    ASSERT_EQ(r.rc, 0) << r.err;
    out[w] = read_file(d + "/esp" + tag + ".pcap");
    js_out[w] = read_file(d + "/o" + tag + ".json");
    r = knod("ipsec --xfrm " + d + "/sa.conf -r " + d + "/esp1.pcap -w " + d + "/dec" + tag +
             ".pcap --dir in --workers " + tag + " --stats " + d + "/i" + tag + ".json");
    ASSERT_EQ(r.rc, 0) << r.err;
    in[w] = read_file(d + "/dec" + tag + ".pcap");
    js_in[w] = read_file(d + "/i" + tag + ".json");
  }
  EXPECT_TRUE(out[0] == out[1]);  // (no dump of 300 frames on failure)
  EXPECT_TRUE(in[0] == in[1]);
  EXPECT_EQ(js_out[0], js_out[1]);
  EXPECT_EQ(js_in[0], js_in[1]);
  // Decrypted: the original records again (the 24-byte file header's snaplen differs).
  std::string plain = read_file(d + "/plain.pcap");
  ASSERT_GT(plain.size(), 24u);
  EXPECT_TRUE(in[0].size() > 24 && in[0].substr(24) == plain.substr(24));
  auto j = nlohmann::json::parse(js_in[1]);
  EXPECT_EQ(j["total"]["packets"], 300);
  EXPECT_EQ(nlohmann::json::parse(js_out[1])["total"]["packets"], 300);
}

}  // namespace
}  // namespace knod::cli_test
