// Kernel check of the example XDP programs: each object passes the Linux verifier, takes its
// maps.json preload, and acts on the bundled captures as its header comment says, with
// BPF_PROG_TEST_RUN as the oracle. Skipped (with the reason) where bpf() is refused.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>

#include <cstdarg>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "io/pcap.h"
#include "preload.h"

namespace {

std::string g_log;  // libbpf's messages for the current load (the verifier log on failure)

int capture_log(libbpf_print_level level, const char* fmt, va_list ap) {
  if (level == LIBBPF_DEBUG) return 0;
  char buf[4096];
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  g_log += buf;
  return n;
}

// Whether this process may load XDP programs; the message explains when not.
bool bpf_allowed(std::string& why) {
  int r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, nullptr);
  if (r == 1) return true;
  // libbpf reports EPERM from the probe load as "not supported" (0).
  why = "bpf(BPF_PROG_LOAD) of a trivial XDP program refused (" +
        std::string(r < 0 ? std::strerror(-r) : "EPERM or no XDP in this kernel") +
        "): the kernel verifier check needs root or CAP_BPF+CAP_NET_ADMIN; skipped";
  return false;
}

struct ObjDeleter {
  void operator()(bpf_object* o) const { bpf_object__close(o); }
};
using Obj = std::unique_ptr<bpf_object, ObjDeleter>;

// Opens, loads (verifier) and preloads examples/xdp/<name>; fails the test with the log.
Obj load(const std::string& name) {
  libbpf_set_print(capture_log);
  g_log.clear();
  std::string path = std::string(KNOD_XDP_OBJ_DIR) + "/" + name + ".o";
  Obj obj(bpf_object__open_file(path.c_str(), nullptr));
  if (!obj) {
    ADD_FAILURE() << path << ": open failed\n" << g_log;
    return nullptr;
  }
  if (int err = bpf_object__load(obj.get())) {
    ADD_FAILURE() << name << ": verifier rejected (" << err << ")\n" << g_log;
    return nullptr;
  }
  knod::examples::preload_maps(obj.get(), std::string(KNOD_XDP_SRC_DIR) + "/" + name + ".maps.json",
                               /*devmap_ifindex=lo*/ 1);
  return obj;
}

int prog_fd(bpf_object* obj, const char* name) {
  bpf_program* p = bpf_object__find_program_by_name(obj, name);
  return p ? bpf_program__fd(p) : -1;
}

struct Result {
  uint32_t verdict;
  std::vector<uint8_t> out;
};

Result test_run(int fd, const std::vector<uint8_t>& pkt) {
  std::vector<uint8_t> out(pkt.size() + 256);
  LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt.data(), .data_out = out.data(),
              .data_size_in = uint32_t(pkt.size()), .data_size_out = uint32_t(out.size()),
              .repeat = 1);
  int err = bpf_prog_test_run_opts(fd, &o);
  EXPECT_EQ(err, 0) << std::strerror(errno);
  out.resize(o.data_size_out);
  return {o.retval, out};
}

std::vector<knod::io::Packet> read_pcap(const std::string& name) {
  knod::io::PcapReader r(std::string(KNOD_PCAP_DIR) + "/" + name);
  std::vector<knod::io::Packet> v;
  knod::io::Packet p;
  while (r.next(p)) v.push_back(p);
  EXPECT_FALSE(r.truncated()) << r.error();
  return v;
}

// RFC 1071 sum over bytes [b, b+n) added to `sum` (not folded).
uint32_t sum16(const uint8_t* b, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(b[i]) << 8 | b[i + 1];
  if (n & 1) sum += uint32_t(b[n - 1]) << 8;
  return sum;
}
uint16_t fold(uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(s);
}
// True when the IPv4 header at `ip` has a valid checksum.
bool ipv4_csum_ok(const uint8_t* ip) {
  return fold(sum16(ip, (ip[0] & 15) * 4)) == 0xffff;
}
// True when the TCP/UDP segment of the IPv4 packet at `ip` has a valid checksum.
bool l4_csum_ok(const uint8_t* ip) {
  size_t ihl = (ip[0] & 15) * 4, tot = size_t(ip[2]) << 8 | ip[3];
  uint32_t s = sum16(ip + 12, 8) + ip[9] + uint32_t(tot - ihl);
  return fold(sum16(ip + ihl, tot - ihl, s)) == 0xffff;
}
uint16_t ethertype(const std::vector<uint8_t>& f) {
  return uint16_t(f[12] << 8 | f[13]);
}

// Sum of the `packets` field of slot `key` of a PERCPU_ARRAY of {u64 packets, u64 bytes}.
uint64_t percpu_packets(bpf_object* obj, const char* map, uint32_t key) {
  bpf_map* m = bpf_object__find_map_by_name(obj, map);
  int n = libbpf_num_possible_cpus();
  std::vector<uint64_t> v(size_t(n) * 2);
  EXPECT_EQ(bpf_map_lookup_elem(bpf_map__fd(m), &key, v.data()), 0);
  uint64_t total = 0;
  for (int c = 0; c < n; c++) total += v[size_t(c) * 2];
  return total;
}

class XdpKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!bpf_allowed(why)) GTEST_SKIP() << why;
  }
};

class XdpVerifier : public XdpKernel, public ::testing::WithParamInterface<const char*> {};

TEST_P(XdpVerifier, LoadsAndPreloads) {
  Obj obj = load(GetParam());
  ASSERT_TRUE(obj);
  bpf_program* p;
  bpf_object__for_each_program(p, obj.get()) {
    EXPECT_EQ(bpf_program__type(p), BPF_PROG_TYPE_XDP);
    EXPECT_GE(bpf_program__fd(p), 0) << bpf_program__name(p);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, XdpVerifier,
                         ::testing::Values("l4lb", "ddos", "vlan", "icmp_echo", "proto_count",
                                           "tailcall", "nat44", "router"));

// Each echo request to 10.0.0.2 becomes XDP_TX whose ICMP bytes equal the reply the real
// kernel sent (next frame in the capture); IP checksum valid, addresses swapped.
TEST_F(XdpKernel, IcmpEchoAnswersLikeTheKernel) {
  Obj obj = load("icmp_echo");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_icmp_echo");
  for (const char* file : {"ping4.pcap", "ping6.pcap"}) {
    auto pk = read_pcap(file);
    bool v6 = file[4] == '6';
    int tx = 0;
    for (size_t i = 0; i < pk.size(); i++) {
      Result r = test_run(fd, pk[i].data);
      if (r.verdict != XDP_TX) {
        EXPECT_EQ(r.verdict, uint32_t(XDP_PASS));
        continue;
      }
      tx++;
      ASSERT_LT(i + 1, pk.size());
      const auto& reply = pk[i + 1].data;  // the kernel's own reply follows the request
      size_t l4 = v6 ? 14 + 40 : 14 + 20;
      ASSERT_EQ(r.out.size(), reply.size());
      EXPECT_EQ(std::vector<uint8_t>(r.out.begin() + l4, r.out.end()),
                std::vector<uint8_t>(reply.begin() + l4, reply.end()))
          << file << " frame " << i;
      EXPECT_EQ(std::vector<uint8_t>(r.out.begin(), r.out.begin() + 12),
                std::vector<uint8_t>(reply.begin(), reply.begin() + 12));  // MACs
      if (!v6) {
        EXPECT_TRUE(ipv4_csum_ok(&r.out[14]));
        EXPECT_EQ(0, std::memcmp(&r.out[14 + 12], &reply[14 + 12], 8));  // addresses
      }
    }
    EXPECT_EQ(tx, 4) << file;
  }
}

// Client packets to a VIP (10.0.0.2: tcp/80 -> backends 10.1.0.1-3, tcp+udp/5201 -> .4-.5,
// udp/53 -> .6-.7) are IPIP-encapsulated with a valid outer header, every flow to a single
// backend (consistent hashing); the server's packets pass.
TEST_F(XdpKernel, L4lbEncapsulatesVipTraffic) {
  Obj obj = load("l4lb");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_l4lb");
  uint64_t tx = 0;
  for (const char* file : {"http.pcap", "dns.pcap", "iperf3-tcp.pcap", "iperf3-udp.pcap"}) {
    int pass = 0, file_tx = 0;
    std::map<uint64_t, uint8_t> flow_backend;  // (proto, sport, dport) -> backend octet
    for (const auto& p : read_pcap(file)) {
      Result r = test_run(fd, p.data);
      const uint8_t* ip = &p.data[14];
      bool to_vip = ip[16] == 10 && ip[17] == 0 && ip[18] == 0 && ip[19] == 2;
      if (!to_vip) {
        EXPECT_EQ(r.verdict, uint32_t(XDP_PASS));
        pass++;
        continue;
      }
      ASSERT_EQ(r.verdict, uint32_t(XDP_TX)) << file;
      file_tx++;
      ASSERT_EQ(r.out.size(), p.data.size() + 20);
      const uint8_t* outer = &r.out[14];
      EXPECT_EQ(outer[0], 0x45);
      EXPECT_EQ(outer[9], 4);  // IPPROTO_IPIP
      EXPECT_TRUE(ipv4_csum_ok(outer));
      EXPECT_EQ((outer[2] << 8 | outer[3]), int(p.data.size() - 14 + 20));
      EXPECT_EQ(0, std::memcmp(outer + 12, "\x0a\x00\x00\x03", 4));  // lb_config.src_addr
      EXPECT_EQ(0, std::memcmp(outer + 16, "\x0a\x01\x00", 3));
      EXPECT_EQ(0, std::memcmp(&r.out[34], &p.data[14], p.data.size() - 14));  // inner intact
      uint16_t dport = uint16_t(ip[22] << 8 | ip[23]);
      uint8_t be = outer[19];
      if (dport == 80) {
        EXPECT_TRUE(be >= 1 && be <= 3) << int(be);
      } else if (dport == 5201) {
        EXPECT_TRUE(be >= 4 && be <= 5) << int(be);
      } else {
        EXPECT_EQ(dport, 53);
        EXPECT_TRUE(be >= 6 && be <= 7) << int(be);
      }
      uint64_t flow = uint64_t(ip[9]) << 32 | uint32_t(ip[20] << 24 | ip[21] << 16) | dport;
      auto [it, fresh] = flow_backend.emplace(flow, be);
      EXPECT_EQ(it->second, be) << file << ": flow moved between backends";
    }
    EXPECT_GT(file_tx, 2) << file;
    EXPECT_GT(pass, 2) << file;
    tx += uint64_t(file_tx);
  }
  EXPECT_EQ(percpu_packets(obj.get(), "lb_stats", 2 /*STAT_TX*/), tx);
}

// vlan.pcap is all 10.0.100.0/24, which the blocklist holds: IPv4 dropped, ARP passed.
TEST_F(XdpKernel, DdosDropsBlocklistedPrefix) {
  Obj obj = load("ddos");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_ddos");
  int drop = 0, pass = 0;
  for (const auto& p : read_pcap("vlan.pcap")) {
    Result r = test_run(fd, p.data);
    uint16_t inner = uint16_t(p.data[16] << 8 | p.data[17]);
    ASSERT_EQ(ethertype(p.data), ETH_P_8021Q);
    if (inner == ETH_P_IP) {
      EXPECT_EQ(r.verdict, uint32_t(XDP_DROP));
      drop++;
    } else {
      EXPECT_EQ(r.verdict, uint32_t(XDP_PASS));
      pass++;
    }
  }
  EXPECT_GT(drop, 0);
  EXPECT_GT(pass, 0);
  EXPECT_EQ(percpu_packets(obj.get(), "ddos_stats", 1 /*DDOS_DROP_BLOCKLIST*/), uint64_t(drop));
}

// VLAN 100 frames are popped (4 bytes shorter, inner ethertype restored, MACs rewritten)
// and redirected through tx_ports.
TEST_F(XdpKernel, VlanPopsAndRedirects) {
  Obj obj = load("vlan");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_vlan");
  int n = 0;
  for (const auto& p : read_pcap("vlan.pcap")) {
    Result r = test_run(fd, p.data);
    ASSERT_EQ(r.verdict, uint32_t(XDP_REDIRECT));
    ASSERT_EQ(r.out.size(), p.data.size() - 4);
    EXPECT_EQ(0, std::memcmp(&r.out[0], "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\xfe", 12));
    EXPECT_EQ(0, std::memcmp(&r.out[12], &p.data[16], p.data.size() - 16));
    n++;
  }
  EXPECT_EQ(n, 24);
  // An untagged frame gets VLAN 200 pushed.
  auto ping = read_pcap("ping4.pcap");
  Result r = test_run(fd, ping[2].data);
  ASSERT_EQ(r.verdict, uint32_t(XDP_REDIRECT));
  ASSERT_EQ(r.out.size(), ping[2].data.size() + 4);
  EXPECT_EQ(ethertype(r.out), ETH_P_8021Q);
  EXPECT_EQ((r.out[14] << 8 | r.out[15]), 200);
  EXPECT_EQ(0, std::memcmp(&r.out[16], &ping[2].data[12], ping[2].data.size() - 12));
}

// Packets from 10.0.0.1 leave as 10.0.1.1 with valid IP and TCP checksums (RFC 1624 path).
TEST_F(XdpKernel, Nat44RewritesSourceWithValidChecksums) {
  Obj obj = load("nat44");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_nat44");
  int snat = 0;
  for (const char* file : {"http.pcap", "dns.pcap", "iperf3-udp.pcap"}) {
    for (const auto& p : read_pcap(file)) {
      Result r = test_run(fd, p.data);
      EXPECT_EQ(r.verdict, uint32_t(XDP_PASS));
      const uint8_t* ip = &r.out[14];
      if (0 == std::memcmp(&p.data[26], "\x0a\x00\x00\x01", 4)) {
        EXPECT_EQ(0, std::memcmp(ip + 12, "\x0a\x00\x01\x01", 4)) << file;
        snat++;
      } else {
        EXPECT_EQ(r.out, p.data);
      }
      EXPECT_TRUE(ipv4_csum_ok(ip));
      EXPECT_TRUE(l4_csum_ok(ip)) << file;
    }
  }
  EXPECT_GT(snat, 50);
  EXPECT_EQ(percpu_packets(obj.get(), "nat_stats", 0), uint64_t(snat));
}

// Fragments are counted by upper protocol: 12 IPv4 ICMP, 12 IPv6 frames of ICMPv6.
TEST_F(XdpKernel, ProtoCountCountsFragmentsByUpperProtocol) {
  Obj obj = load("proto_count");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_proto_count");
  for (const auto& p : read_pcap("frag.pcap"))
    EXPECT_EQ(test_run(fd, p.data).verdict, uint32_t(XDP_PASS));
  EXPECT_EQ(percpu_packets(obj.get(), "proto_stats", 1), 12u);
  EXPECT_EQ(percpu_packets(obj.get(), "proto_stats", 58), 12u);
  EXPECT_EQ(percpu_packets(obj.get(), "ethertype_stats", 1), 12u);
  EXPECT_EQ(percpu_packets(obj.get(), "ethertype_stats", 2), 12u);
}

// The dispatcher tail-calls xdp_udp for every DNS frame.
TEST_F(XdpKernel, TailcallDispatchesByProtocol) {
  Obj obj = load("tailcall");
  ASSERT_TRUE(obj);
  int fd = prog_fd(obj.get(), "xdp_dispatch");
  auto pk = read_pcap("dns.pcap");
  for (const auto& p : pk) EXPECT_EQ(test_run(fd, p.data).verdict, uint32_t(XDP_PASS));
  EXPECT_EQ(percpu_packets(obj.get(), "disp_stats", 1 /*SLOT_UDP*/), pk.size());
  EXPECT_EQ(percpu_packets(obj.get(), "disp_stats", 3 /*SLOT_MISS*/), 0u);
}

}  // namespace
