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
using knod::cli_test::send_frames;
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

// knod on TAP `tap` (--tap `arg`, a name or a template) with --stats, stopped (SIGSTOP) while
// the kernel sends `frames` frames out of the TAP, then `then` (a shell command, may be
// empty), SIGINT and SIGCONT. The run's Result and its stats' port. No IPv6 on the TAP (its
// autoconfiguration would send frames of its own) and no IPv4 address: the kernel sends
// nothing but the test's frames.
struct Stopped {
  Result r;
  nlohmann::json port;
};
Stopped flood_stopped(const std::string& arg, const std::string& tap, int frames,
                      const std::string& then) {
  const std::string dir = temp_dir();
  auto run = std::async(std::launch::async, [&] {
    Result r = knod("run " + kIcmpEcho + " --tap '" + arg + "' --stats " + dir + "/stats.json > " +
                    dir + "/out 2> " + dir + "/err & echo $! > " + dir + "/pid; wait $!");
    r.out = read_file(dir + "/out"), r.err = read_file(dir + "/err");
    return r;
  });
  Stopped out;
  EXPECT_TRUE(wait_for(tap)) << "knod made no " << tap << " in 60 s";
  // A persistent TAP exists before knod: knod has it once its carrier is on (a TAP without
  // a reader has none; `ip link` says NO-CARRIER while it is up).
  EXPECT_EQ(std::system(("sysctl -qw net.ipv6.conf." + tap + ".disable_ipv6=1 && ip link set " +
                         tap + " up && i=0; while ip link show " + tap +
                         " | grep -q NO-CARRIER; do i=$((i+1)); [ $i -gt 600 ] && exit 1; "
                         "sleep 0.1; done")
                            .c_str()),
            0)
      << "knod did not open " << tap;
  std::string pid;
  for (int i = 0; i < 100 && pid.empty(); ++i, std::this_thread::sleep_for(10ms))
    pid = read_file(dir + "/pid");
  EXPECT_FALSE(pid.empty());
  const pid_t knod_pid = pid.empty() ? 0 : static_cast<pid_t>(std::stol(pid));
  if (knod_pid > 0 && ::kill(knod_pid, SIGSTOP) == 0) {
    send_frames(tap, frames);
    if (!then.empty()) {
      EXPECT_EQ(std::system(then.c_str()), 0) << then;
    }
    ::kill(knod_pid, SIGINT);
    ::kill(knod_pid, SIGCONT);
  }
  if (run.wait_for(std::chrono::seconds(90)) != std::future_status::ready) {
    ADD_FAILURE() << "knod did not end";
    return out;
  }
  out.r = run.get();
  const std::string stats = read_file(dir + "/stats.json");
  if (!stats.empty()) {
    const auto st = nlohmann::json::parse(stats);
    if (st.contains("ports") && st["ports"].size() == 1) out.port = st["ports"][0];
  }
  return out;
}

// The TAP's queue full: knod is stopped while the kernel sends 3000 frames out of kt0, more
// than the TAP's ring holds (tx_queue_len: 1000 here). No frame is lost unseen: rx + unread +
// kernel_dropped (kt0's tx_dropped) is every frame, the ones the full ring refused in
// kernel_dropped. Also when kt0 was renamed before the end (the drops are the interface's,
// found by its ifindex, not by a name another interface may take), and when --tap gave a
// name template (kt%d: the kernel's kt0 is the port's name).
TEST(RunTap, FramesDroppedOrQueuedAtAStopAreCounted) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  for (const auto& [arg, then] :
       {std::pair<std::string, std::string>{"kt0", ""},
        {"kt0",
         "ip link set kt0 down && ip link set kt0 name ktR && ip tuntap add dev kt0 mode tap"},
        {"kt%d", ""}}) {
    SCOPED_TRACE(arg + " then '" + then + "'");
    Stopped s = flood_stopped(arg, "kt0", 3000, then);
    ASSERT_EQ(s.r.rc, 0) << s.r.err;
    ASSERT_FALSE(s.port.is_null()) << s.r.out;
    EXPECT_EQ(s.port["name"], "kt0");
    const uint64_t rx = s.port["rx"], unread = s.port["unread"], dropped = s.port["kernel_dropped"];
    EXPECT_EQ(rx + unread + dropped, 3000u) << s.port.dump();
    EXPECT_GT(dropped, 0u) << s.port.dump();
    EXPECT_EQ(s.port["unread_capped"], false);
    EXPECT_NE(s.r.out.find("; " + std::to_string(dropped) +
                           " dropped by the kernel before knod (tx_dropped, queue full)"),
              std::string::npos)
        << s.r.out;
    std::system("ip link del ktR 2>/dev/null; ip link del kt0 2>/dev/null");
  }
}

// A TAP queue longer than what knod drains at the end (8192 frames): the summary says "at
// least", the stats unread_capped.
TEST(RunTap, ADrainCutAtItsCapSaysSo) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(std::system("ip tuntap add dev kt6 mode tap && ip link set kt6 txqueuelen 12000"), 0);
  Stopped s = flood_stopped("kt6", "kt6", 9000, "");
  ASSERT_EQ(s.r.rc, 0) << s.r.err;
  ASSERT_FALSE(s.port.is_null()) << s.r.out;
  EXPECT_EQ(s.port["unread"], 8192);
  EXPECT_EQ(s.port["unread_capped"], true);
  EXPECT_EQ(s.port["kernel_dropped"], 0);
  EXPECT_NE(s.r.out.find("; at least 8192 queued at the end, not run\n"), std::string::npos)
      << s.r.out;
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
