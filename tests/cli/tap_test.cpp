// `knod run --tap`: the bundled icmp_echo program answers the kernel's pings live. The test
// enters a network namespace of its own (root; skipped with a message where refused), starts
// knod on TAP interface kt0, gives kt0 an address and a neighbour 10.0.0.2 (an address
// icmp_echo.maps.json answers for), and sends ICMP echo requests from a raw socket: the
// replies the kernel delivers were made by the XDP program (XDP_TX, written back into kt0).
// Also -c on a capture, and the command line errors of the two sources.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_test.h"

namespace {

using namespace std::chrono_literals;
using knod::cli_test::knod;
using knod::cli_test::read_file;
using knod::cli_test::Result;
using knod::cli_test::temp_dir;

const std::string kIcmpEcho = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
const std::string kIcmpMaps = std::string(KNOD_EXAMPLE_SRC_DIR) + "/icmp_echo.maps.json";
const std::string kPing4 = std::string(KNOD_PCAP_DIR) + "/ping4.pcap";  // 10 frames

std::string enter_netns() {
  if (::access("/dev/net/tun", R_OK | W_OK) != 0)
    return std::string("/dev/net/tun: ") + strerror(errno);
  if (::unshare(CLONE_NEWNET) != 0)
    return std::string("unshare(CLONE_NEWNET): ") + strerror(errno) + " (needs root)";
  return "";
}

// Waits (up to 60 s: knod loads and compiles first, slowly under sanitizers) for `dev`.
bool wait_for(const std::string& dev) {
  for (int i = 0; i < 1200; ++i) {
    if (::if_nametoindex(dev.c_str())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(RunTap, AnswersThePingsOfTheKernelWithXdpTx) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  // 3 echo requests (XDP_TX) and one UDP datagram (XDP_PASS): -c 4.
  auto run = std::async(std::launch::async, [&] {
    return knod("run " + kIcmpEcho + " --map-load " + kIcmpMaps + " --tap kt0 -c 4 --stats " + dir +
                "/stats.json --tx " + dir + "/tx.pcap --workers 2");
  });
  ASSERT_TRUE(wait_for("kt0")) << "knod made no kt0 in 60 s";
  ASSERT_EQ(std::system("sysctl -qw net.ipv6.conf.kt0.disable_ipv6=1 && "
                        "ip addr add 10.0.0.1/24 dev kt0 && ip link set kt0 up && "
                        "ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev kt0 nud permanent"),
            0);
  knod::cli_test::expect_echo_replies("10.0.0.2", "knod-tap");
  if (HasFatalFailure()) return;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  inet_pton(AF_INET, "10.0.0.2", &to.sin_addr);
  int u = ::socket(AF_INET, SOCK_DGRAM, 0);
  to.sin_port = htons(9);
  ASSERT_EQ(::sendto(u, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 1);
  ::close(u);

  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("4 packets, 193 bytes from tap kt0 (ifindex "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tap kt0: 4 frames in; out: 3 XDP_TX, 0 XDP_REDIRECT\n"), std::string::npos)
      << r.out;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_TX"], 3);
  EXPECT_EQ(st["verdicts"]["XDP_PASS"], 1);
  ASSERT_EQ(st["ports"].size(), 1u);
  const auto& t = st["ports"][0];
  EXPECT_EQ(t["name"], "kt0");
  EXPECT_EQ(t["rx"], 4);
  EXPECT_EQ(t["tx"], 3);
  EXPECT_EQ(t["redirected"], 0);
  EXPECT_EQ(t["refused"], 0);
  EXPECT_EQ(t["ifindex"], 2);  // lo is 1 in a new namespace, kt0 the next
  // --tx: the 3 replies as sent, 50-byte frames: 24 + 3 x (16 + 50) bytes of pcap.
  EXPECT_EQ(read_file(dir + "/tx.pcap").size(), 24u + 3 * (16 + 50));
}

// Two ports and a DEVMAP (tests/cli/bpf/patch_panel.c): a frame the kernel sends out of kt0
// comes back into the kernel on kt1, seen there by a packet socket.
TEST(RunTap, RedirectsIntoAnotherPortThroughADevmap) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  // kt0 is ifindex 2 and kt1 3 in a new namespace (lo is 1): 2 -> 3.
  knod::cli_test::write_file(
      dir + "/ports.json", R"({"maps": {"tx_port": [{"key": "02000000", "value": "03000000"}]}})");
  auto run = std::async(std::launch::async, [&] {
    return knod("run " + std::string(KNOD_CLI_FIXTURES) + "/patch_panel.o --map-load " + dir +
                "/ports.json --tap kt0 --tap kt1 -c 1 --stats " + dir + "/stats.json");
  });
  ASSERT_TRUE(wait_for("kt0") && wait_for("kt1")) << "knod made no kt0 and kt1 in 60 s";
  ASSERT_EQ(std::system("for d in kt0 kt1; do sysctl -qw net.ipv6.conf.$d.disable_ipv6=1; done && "
                        "ip addr add 10.0.0.1/24 dev kt0 && ip link set kt0 up && "
                        "ip link set kt1 up && "
                        "ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev kt0 nud permanent"),
            0);
  int ps = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ASSERT_GE(ps, 0) << strerror(errno);
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_protocol = htons(ETH_P_ALL);
  ll.sll_ifindex = static_cast<int>(::if_nametoindex("kt1"));
  ASSERT_EQ(::bind(ps, reinterpret_cast<sockaddr*>(&ll), sizeof ll), 0) << strerror(errno);
  timeval tv{10, 0};
  setsockopt(ps, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int u = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  inet_pton(AF_INET, "10.0.0.2", &to.sin_addr);
  ASSERT_EQ(::sendto(u, "to-kt1", 6, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 6);
  ::close(u);
  uint8_t f[256];
  ssize_t n = 0;
  for (;;) {  // the first frame kt1 received (not one it sent)
    sockaddr_ll from{};
    socklen_t fl = sizeof from;
    n = ::recvfrom(ps, f, sizeof f, 0, reinterpret_cast<sockaddr*>(&from), &fl);
    ASSERT_GT(n, 0) << "nothing arrived on kt1: " << strerror(errno);
    if (from.sll_pkttype != PACKET_OUTGOING) break;
  }
  ::close(ps);
  ASSERT_EQ(n, 14 + 20 + 8 + 6);
  const uint8_t neigh[6] = {2, 0, 0, 0, 0, 2};
  EXPECT_EQ(std::memcmp(f, neigh, 6), 0);
  EXPECT_EQ(f[12], 0x08);
  EXPECT_EQ(f[13], 0x00);
  EXPECT_EQ(std::memcmp(f + 42, "to-kt1", 6), 0);

  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("tap kt1: 0 frames in; out: 0 XDP_TX, 1 XDP_REDIRECT\n"), std::string::npos)
      << r.out;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_REDIRECT"], 1);
  EXPECT_EQ(st["ports"][0]["rx"], 1);
  EXPECT_EQ(st["ports"][0]["redirected"], 0);
  EXPECT_EQ(st["ports"][1]["ifindex"], 3);
  EXPECT_EQ(st["ports"][1]["redirected"], 1);
  EXPECT_EQ(st["redirect_unsent"], 0);
}

TEST(RunTap, DurationAndCtrlCEndTheRunCleanly) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  Result r = knod("run " + kIcmpEcho + " --tap kt1 --duration 0.2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(": 0 packets, 0 bytes from tap kt1"), std::string::npos) << r.out;
  // SIGINT once kt1 exists (the handler is in place before the interface is made).
  r = knod("run " + kIcmpEcho +
           " --tap kt1 -q & p=$!; i=0; until ip link show kt1 >/dev/null 2>&1; do "
           "i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.1; done; kill -INT $p; wait $p");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// The TAP's queue full: knod is stopped (SIGSTOP) while the kernel sends 3000 frames out of
// kt0, more than the TAP's ring holds (tx_queue_len: 1000 here), then gets SIGINT and goes on. No
// frame is lost unseen: rx + unread + kernel_dropped (kt0's tx_dropped) is every frame, and
// the ones the full ring refused are in kernel_dropped.
TEST(RunTap, FramesDroppedOrQueuedAtAStopAreCounted) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  auto run = std::async(std::launch::async, [&] {
    Result r = knod("run " + kIcmpEcho + " --tap kt0 --stats " + dir + "/stats.json > " + dir +
                    "/out 2> " + dir + "/err & echo $! > " + dir + "/pid; wait $!");
    r.out = read_file(dir + "/out"), r.err = read_file(dir + "/err");
    return r;
  });
  ASSERT_TRUE(wait_for("kt0")) << "knod made no kt0 in 60 s";
  // No IPv6 (its autoconfiguration would send frames of its own), no IPv4 address: the
  // kernel sends nothing but the test's frames.
  ASSERT_EQ(std::system("sysctl -qw net.ipv6.conf.kt0.disable_ipv6=1 && ip link set kt0 up"), 0);
  std::string pid;
  for (int i = 0; i < 100 && pid.empty(); ++i, std::this_thread::sleep_for(10ms))
    pid = read_file(dir + "/pid");
  ASSERT_FALSE(pid.empty());
  const pid_t knod_pid = static_cast<pid_t>(std::stol(pid));
  ASSERT_EQ(::kill(knod_pid, SIGSTOP), 0);
  int s = ::socket(AF_PACKET, SOCK_RAW, 0);
  ASSERT_GE(s, 0) << strerror(errno);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(::if_nametoindex("kt0"));
  to.sll_halen = 6;
  uint8_t f[60] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5};  // local exp.
  constexpr int kFrames = 3000;
  for (int i = 0; i < kFrames; ++i) {
    f[14] = uint8_t(i), f[15] = uint8_t(i >> 8);
    ASSERT_EQ(::sendto(s, f, sizeof f, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 60)
        << strerror(errno);
  }
  ::close(s);
  ASSERT_EQ(::kill(knod_pid, SIGINT), 0);
  ASSERT_EQ(::kill(knod_pid, SIGCONT), 0);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  ASSERT_EQ(st["ports"].size(), 1u);
  const auto& p = st["ports"][0];
  const uint64_t rx = p["rx"], unread = p["unread"], dropped = p["kernel_dropped"];
  EXPECT_EQ(rx + unread + dropped, uint64_t(kFrames)) << st.dump();
  EXPECT_GT(dropped, 0u) << st.dump();
  EXPECT_NE(r.out.find("; " + std::to_string(dropped) +
                       " dropped by the kernel before knod (tx_dropped, queue full)"),
            std::string::npos)
      << r.out;
}

TEST(RunTap, SourcesOnTheCommandLine) {
  Result r = knod("run " + kIcmpEcho + " -r " + kPing4 + " --tap kt0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-r and --tap both give the packets: choose one"), std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " -r " + kPing4 + " --duration 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--duration: only with --tap"), std::string::npos) << r.err;
  r = knod("run " + kIcmpEcho + " --tap kt0 --tap kt0");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --tap kt0: given twice\n");
  r = knod("run " + kIcmpEcho + " --tap abcdefghijklmnop");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --tap 'abcdefghijklmnop': an interface name has 1 to 15 bytes\n");
  // -c on a capture: the first N frames (ping4.pcap: 10 frames, 5 requests first).
  r = knod("run " + kIcmpEcho + " --map-load " + kIcmpMaps + " -r " + kPing4 + " -c 3");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(": 3 packets, "), std::string::npos) << r.out;
}

}  // namespace
