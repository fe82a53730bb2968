// `knod run --xsk`: the bundled icmp_echo program answers the kernel's pings on an AF_XDP
// socket. The test enters a network namespace of its own (root; skipped with a message where
// refused) and makes a veth pair: kv0 is the kernel's side (10.0.0.1/24, neighbour 10.0.0.2,
// an address icmp_echo.maps.json answers for), kv1 the NIC knod takes queue 0 of. Echo
// requests sent from a raw socket leave kv0, arrive on kv1, go through knod's redirect
// program into its socket; the replies the kernel delivers were made by the XDP program
// (XDP_TX, out of kv1 through the socket's TX ring).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_test.h"

namespace {

using knod::cli_test::knod;
using knod::cli_test::read_file;
using knod::cli_test::Result;
using knod::cli_test::send_frame;
using knod::cli_test::send_frames;
using knod::cli_test::Socket;
using knod::cli_test::temp_dir;

const std::string kIcmpEcho = std::string(KNOD_EXAMPLE_OBJ_DIR) + "/icmp_echo.o";
const std::string kIcmpMaps = std::string(KNOD_EXAMPLE_SRC_DIR) + "/icmp_echo.maps.json";

// `queues`: each end's RX and TX queues.
std::string enter_netns_with_veth(int queues = 1) {
  if (::unshare(CLONE_NEWNET) != 0)
    return std::string("unshare(CLONE_NEWNET): ") + strerror(errno) + " (needs root)";
  const std::string q =
      " numtxqueues " + std::to_string(queues) + " numrxqueues " + std::to_string(queues);
  const std::string add = "ip link add kv0" + q + " type veth peer name kv1" + q;
  if (std::system(("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && " + add +
                   " && ip link set kv1 up && "
                   "ip addr add 10.0.0.1/24 dev kv0 && ip link set kv0 up && "
                   "ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev kv0 nud permanent")
                      .c_str()) != 0)
    return "cannot make a veth pair (" + add + ")";
  return "";
}

// Waits (up to 60 s: knod loads and compiles first, slowly under sanitizers) until knod's
// program is on kv1: its socket is bound by then.
bool wait_for_xdp(const char* dev) {
  for (int i = 0; i < 1200; ++i) {
    uint32_t id = 0;
    if (bpf_xdp_query_id(static_cast<int>(::if_nametoindex(dev)), 0, &id) == 0 && id) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(RunXsk, AnswersThePingsArrivingOnItsQueueWithXdpTx) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  const uint32_t kv1 = ::if_nametoindex("kv1");
  // 3 echo requests (XDP_TX) and one UDP datagram (XDP_PASS): -c 4.
  auto run = std::async(std::launch::async, [&] {
    return knod("run " + kIcmpEcho + " --map-load " + kIcmpMaps + " --xsk kv1 -c 4 --stats " + dir +
                "/stats.json --tx " + dir + "/tx.pcap --workers 2");
  });
  if (!wait_for_xdp("kv1")) {
    ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    Result r = run.get();
    if (r.err.find("Address family not supported") != std::string::npos)
      GTEST_SKIP() << "no AF_XDP in this kernel: " << r.err;
    FAIL() << "knod attached nothing to kv1 in 60 s: " << r.err;
  }
  knod::cli_test::expect_echo_replies("10.0.0.2", "knod-xsk");
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
  EXPECT_NE(r.out.find("4 packets, 193 bytes from xsk kv1:0 (ifindex " + std::to_string(kv1) +
                       ", xdpdrv, copy)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("xsk kv1:0: 4 frames in; out: 3 XDP_TX, 0 XDP_REDIRECT\n"),
            std::string::npos)
      << r.out;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_TX"], 3);
  EXPECT_EQ(st["verdicts"]["XDP_PASS"], 1);
  ASSERT_EQ(st["ports"].size(), 1u);
  const auto& p = st["ports"][0];
  EXPECT_EQ(p["kind"], "xsk");
  EXPECT_EQ(p["name"], "kv1");
  EXPECT_EQ(p["queue"], 0);
  EXPECT_EQ(p["ifindex"], kv1);
  EXPECT_EQ(p["rx"], 4);
  EXPECT_EQ(p["tx"], 3);
  EXPECT_EQ(p["refused"], 0);
  EXPECT_EQ(p["kernel_dropped"], 0);
  // --tx: the 3 replies as sent, 50-byte frames: 24 + 3 x (16 + 50) bytes of pcap.
  EXPECT_EQ(read_file(dir + "/tx.pcap").size(), 24u + 3 * (16 + 50));
  uint32_t id = 0;
  bpf_xdp_query_id(static_cast<int>(kv1), 0, &id);
  EXPECT_EQ(id, 0u) << "knod left its program on kv1";
}

TEST(RunXsk, PortsOnTheCommandLine) {
  Result r = knod("run " + kIcmpEcho + " -r x.pcap --xsk kv1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-r and --xsk both give the packets: choose one"), std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " -r x.pcap --pass-tap kp0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--pass-tap: only with --xsk ports of one interface (the TAP takes its "
                       "place in the host's stack)"),
            std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " --xsk kv1 --pass-tap ''");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--pass-tap '': an interface name has 1 to 15 bytes"), std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " --xsk kv1 --tap kt9 --pass-tap kp0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--pass-tap: only with --xsk ports of one interface"), std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " --xsk kv1 --xsk kv0:1 --pass-tap kp0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--pass-tap: only with --xsk ports of one interface"), std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " --xsk kv1:q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "knod: run: --xsk 'kv1:q': expected IFACE or IFACE:QUEUE (a queue number) (see "
            "knod run --help)\n");
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  // A persistent TAP that is down would refuse every frame: refused at the start.
  ASSERT_EQ(std::system("ip tuntap add dev kq0 mode tap"), 0);
  r = knod("run " + kIcmpEcho + " --xsk kv1 --pass-tap kq0 --duration 0.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --pass-tap kq0: the interface is down (ip link set kq0 up)\n");
  r = knod("run " + kIcmpEcho + " --xsk kv1 --pass-tap kv0 --duration 0.1");  // a veth
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("knod: --pass-tap kv0: cannot create or attach the TAP interface"),
            std::string::npos)
      << r.err;
  r = knod("run " + kIcmpEcho + " --xsk nosuch0");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk nosuch0:0: no such interface\n");
  r = knod("run " + kIcmpEcho + " --xsk kv1 --xsk kv1:0");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk kv1:0: given twice\n");
  ASSERT_EQ(std::system("ip link property add dev kv1 altname kvalt"), 0);
  r = knod("run " + kIcmpEcho + " --xsk kv1 --xsk kvalt:0");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk kvalt:0: given twice (kv1 is kvalt)\n");
  r = knod("run " + kIcmpEcho + " --xsk kv1 --xsk kv1:1");  // kv1 has one queue
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "knod: --xsk kv1:1: cannot open an AF_XDP socket on the queue (Invalid argument: "
            "does the interface have that queue?)\n");
  uint32_t left = 0;  // nothing was attached: the program goes on once every socket is open
  bpf_xdp_query_id(static_cast<int>(::if_nametoindex("kv1")), 0, &left);
  EXPECT_EQ(left, 0u) << "knod left its program on kv1";
  // An interface with an XDP program of someone else's (return XDP_PASS): refused, left as
  // it was.
  const bpf_insn pass[] = {{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
                           {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  const int prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "other", "GPL", pass, 2, nullptr);
  ASSERT_GE(prog, 0) << strerror(-prog);
  const int kv1 = static_cast<int>(::if_nametoindex("kv1"));
  // Another namespace's kv1, of the same ifindex, with a program of its own held by a BPF
  // link: that link is not this kv1's, and the hint does not name it (bpf_link_info gives the
  // ifindex and no namespace).
  const int here = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(here, 0) << strerror(errno);
  ASSERT_EQ(::unshare(CLONE_NEWNET), 0) << strerror(errno);
  const int there = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);  // keeps it alive
  const int add = std::system(("ip link add kv1 index " + std::to_string(kv1) +
                               " type veth peer name kv0 index " + std::to_string(kv1 + 1))
                                  .c_str());
  const int foreign_prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign", "GPL", pass, 2, nullptr);
  bpf_link_create_opts skb{};
  skb.sz = sizeof skb;
  skb.flags = XDP_FLAGS_SKB_MODE;
  const int foreign = bpf_link_create(foreign_prog, kv1, BPF_XDP, &skb);
  ASSERT_EQ(::setns(here, CLONE_NEWNET), 0) << strerror(errno);
  ::close(here);
  ASSERT_EQ(add, 0);
  ASSERT_GE(foreign, 0) << strerror(-foreign);
  ASSERT_EQ(bpf_xdp_attach(kv1, prog, XDP_FLAGS_SKB_MODE, nullptr), 0);
  uint32_t id = 0;
  ASSERT_EQ(bpf_xdp_query_id(kv1, 0, &id), 0);
  ASSERT_NE(id, 0u);
  r = knod("run " + kIcmpEcho + " --xsk kv1 --duration 0.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk kv1:0: the interface already has an XDP program (id " +
                       std::to_string(id) +
                       "); knod attaches its own: detach it first (ip link set dev kv1 "
                       "xdpgeneric off)\n");
  uint32_t after = 0;
  bpf_xdp_query_id(kv1, 0, &after);
  EXPECT_EQ(after, id);
  // The hint does what it says (`xdp off` would leave a generic program on).
  ASSERT_EQ(std::system("ip link set dev kv1 xdpgeneric off"), 0);
  after = ~0u;
  ASSERT_EQ(bpf_xdp_query_id(kv1, 0, &after), 0);
  EXPECT_EQ(after, 0u);
  // Held by a BPF link, which ip(8) cannot take off: the hint names the link.
  const int link = bpf_link_create(prog, kv1, BPF_XDP, nullptr);
  ASSERT_GE(link, 0) << strerror(-link);
  bpf_link_info li{};
  uint32_t li_len = sizeof li;
  ASSERT_EQ(bpf_obj_get_info_by_fd(link, &li, &li_len), 0);
  r = knod("run " + kIcmpEcho + " --xsk kv1 --duration 0.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk kv1:0: the interface already has an XDP program (id " +
                       std::to_string(id) +
                       "); knod attaches its own: detach it first (bpftool link detach id " +
                       std::to_string(li.id) + ")\n");
  // bpftool where it runs (a distribution's wrapper may be there without the tools for this
  // kernel), else closing the link's fd detaches it.
  if (std::system("bpftool version > /dev/null 2>&1") == 0) {
    ASSERT_EQ(std::system(("bpftool link detach id " + std::to_string(li.id)).c_str()), 0);
    after = ~0u;
    ASSERT_EQ(bpf_xdp_query_id(kv1, 0, &after), 0);
    EXPECT_EQ(after, 0u);
  }
  ::close(link);
  ::close(prog);
  ::close(foreign);
  ::close(foreign_prog);
  ::close(there);
  // --duration ends an idle run: 0 packets, the program detached.
  r = knod("run " + kIcmpEcho + " --xsk kv0 --duration 0.2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(": 0 packets, 0 bytes from xsk kv0:0"), std::string::npos) << r.out;
  bpf_xdp_query_id(static_cast<int>(::if_nametoindex("kv0")), 0, &id);
  EXPECT_EQ(id, 0u);
}

// Starts `knod run ARGS` in the background (its pid in `dir`/pid, its output in `dir`/out and
// err, for `run`'s Result) and waits until its program is on kv1; the pid, or 0 (then `why`
// says what happened).
pid_t start_knod(std::future<Result>& run, const std::string& args, const std::string& dir,
                 std::string& why) {
  run = std::async(std::launch::async, [=] {
    Result r = knod("run " + args + " > " + dir + "/out 2> " + dir + "/err & echo $! > " + dir +
                    "/pid; wait $!");
    r.out = read_file(dir + "/out"), r.err = read_file(dir + "/err");
    return r;
  });
  if (!wait_for_xdp("kv1")) {
    if (run.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
      why = "knod attached nothing to kv1 in 60 s";
    else
      why = run.get().err;
    return 0;
  }
  return static_cast<pid_t>(std::stol(read_file(dir + "/pid")));
}

// Gives kv1 the Ethernet address 02:00:00:00:00:02, starts `knod run icmp_echo.o --xsk kv1
// --pass-tap kp0 ARGS` (start_knod) and waits up to 30 s for kp0 to be up: the pid, or 0 (then
// `why` says what happened).
pid_t start_pass_tap(std::future<Result>& run, const std::string& args, const std::string& dir,
                     std::string& why) {
  if (std::system("ip link set kv1 down && ip link set kv1 address 02:00:00:00:00:02 && "
                  "ip link set kv1 up") != 0) {
    why = "cannot set kv1's Ethernet address";
    return 0;
  }
  const pid_t pid = start_knod(run, kIcmpEcho + " --xsk kv1 --pass-tap kp0 " + args, dir, why);
  for (int i = 0; pid && i < 600 && std::system("ip link show kp0 up | grep -q kp0") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return pid;
}

// Ctrl-C with frames still on the RX ring: knod's program comes off, and the frames queued
// are counted (unread), not lost. knod is stopped (SIGSTOP) while 300 frames arrive, then
// gets SIGINT and goes on: rx + unread + kernel_dropped is every frame.
TEST(RunXsk, FramesQueuedAtAStopAreCounted) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid =
      start_knod(run, kIcmpEcho + " --xsk kv1 --stats " + dir + "/stats.json", dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  send_frames("kv0", 300);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  ASSERT_EQ(st["ports"].size(), 1u);
  const auto& p = st["ports"][0];
  EXPECT_EQ(p["kernel_dropped"], 0);
  EXPECT_EQ(p["rx"].get<uint64_t>() + p["unread"].get<uint64_t>(), 300u) << st.dump();
  EXPECT_EQ(st["packets"], p["rx"]);
  if (p["unread"] != 0) {
    EXPECT_NE(r.out.find("; " + p["unread"].dump() + " queued at the end, not run\n"),
              std::string::npos)
        << r.out;
  }
}

// The interface deleted under a running knod: the run ends as a stop would (the summary and
// --stats with what ran), then the error, exit 1.
TEST(RunXsk, InterfaceDeletedMidRunEndsWithItsCounters) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid = start_knod(
      run, kIcmpEcho + " --map-load " + kIcmpMaps + " --xsk kv1 --stats " + dir + "/stats.json",
      dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  knod::cli_test::expect_echo_replies("10.0.0.2", "knod-del");
  if (HasFatalFailure()) return;
  ASSERT_EQ(std::system("ip link del kv0"), 0);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "knod: --xsk kv1:0: the interface went away (Network is down)\n");
  EXPECT_NE(r.out.find(": 3 packets, 150 bytes from xsk kv1:0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("xsk kv1:0: 3 frames in; out: 3 XDP_TX, 0 XDP_REDIRECT\n"),
            std::string::npos)
      << r.out;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_TX"], 3);
  EXPECT_EQ(st["ports"][0]["rx"], 3);
  EXPECT_EQ(st["ports"][0]["tx"], 3);
  EXPECT_EQ(st["port_error"], "--xsk kv1:0: the interface went away (Network is down)");
}

// --pass-tap: a frame the program passes reaches the host's stack. A UDP datagram (icmp_echo
// passes it) for 10.0.0.2 is sent as a raw frame out of kv0 to kv1's address; knod takes it
// from kv1's queue and writes it into kp0, the TAP it made, gave kv1's Ethernet address and
// brought up; 10.0.0.2 is kp0's, and a UDP socket bound there (and to kp0) receives it. A
// frame no protocol takes is counted as dropped by the stack.
TEST(RunXsk, PassTapHandsXdpPassFramesToTheStack) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(std::system("sysctl -qw net.ipv4.conf.all.rp_filter=0 "
                        "net.ipv4.conf.default.rp_filter=0"),
            0);
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid = start_pass_tap(
      run, "--map-load " + kIcmpMaps + " -c 2 --stats " + dir + "/stats.json", dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  ifreq ifr{};  // kp0: up, with kv1's Ethernet address
  std::strcpy(ifr.ifr_name, "kp0");
  const Socket s{::socket(AF_INET, SOCK_DGRAM, 0)};
  ASSERT_EQ(::ioctl(s.fd, SIOCGIFFLAGS, &ifr), 0) << strerror(errno);
  EXPECT_TRUE(ifr.ifr_flags & IFF_UP);
  ASSERT_EQ(::ioctl(s.fd, SIOCGIFHWADDR, &ifr), 0) << strerror(errno);
  EXPECT_EQ(std::memcmp(ifr.ifr_hwaddr.sa_data, "\x02\0\0\0\0\x02", 6), 0);
  ASSERT_EQ(std::system("ip addr add 10.0.0.2/32 dev kp0"), 0);
  // Bound to kp0: a datagram that reached the stack any other way (kv1) is not received.
  const Socket sock{::socket(AF_INET, SOCK_DGRAM, 0)};
  const int u = sock.fd;
  ASSERT_GE(u, 0);
  ASSERT_EQ(setsockopt(u, SOL_SOCKET, SO_BINDTODEVICE, "kp0", 4), 0) << strerror(errno);
  timeval tv{10, 0};
  setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(9);
  inet_pton(AF_INET, "10.0.0.2", &at.sin_addr);
  ASSERT_EQ(::bind(u, reinterpret_cast<sockaddr*>(&at), sizeof at), 0) << strerror(errno);
  // Ethernet to kv1 (02:..:02), IPv4 10.0.0.9 -> 10.0.0.2, UDP 1234 -> 9, "knod!".
  std::vector<uint8_t> f = {2, 0,  0,    0,    0,    2, 2,  0,  0, 0, 0,   9,   0x08, 0x00, 0x45, 0,
                            0, 33, 0,    1,    0x40, 0, 64, 17, 0, 0, 10,  0,   0,    9,    10,   0,
                            0, 2,  0x04, 0xd2, 0,    9, 0,  13, 0, 0, 'k', 'n', 'o',  'd',  '!'};
  uint32_t sum = 0;
  for (size_t i = 14; i < 34; i += 2) sum += uint32_t(f[i] << 8 | f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  f[24] = uint8_t(~sum >> 8), f[25] = uint8_t(~sum);
  send_frame("kv0", f);
  char got[16] = {};
  sockaddr_in from{};
  socklen_t fl = sizeof from;
  const ssize_t n = ::recvfrom(u, got, sizeof got, 0, reinterpret_cast<sockaddr*>(&from), &fl);
  EXPECT_EQ(n, 5) << "the stack delivered nothing: " << strerror(errno);
  EXPECT_EQ(std::string(got, 5), "knod!");
  EXPECT_EQ(ntohs(from.sin_port), 1234);
  EXPECT_EQ(ntohl(from.sin_addr.s_addr), 0x0a000009u);
  // A frame of EtherType 0x88b5 (icmp_echo passes it): no protocol of the stack takes it, and
  // kp0's rx_dropped counts it (a packet socket for every protocol would take it; before Linux
  // 6.15 their list is the host's, so a `tcpdump -i any` elsewhere makes this 0).
  std::vector<uint8_t> odd(60, 0);
  std::copy_n(f.begin(), 12, odd.begin());
  odd[12] = 0x88, odd[13] = 0xb5;
  send_frame("kv0", odd);

  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("pass-tap kp0: 2 XDP_PASS frames to the kernel (1 dropped by its stack: "
                       "rx_dropped, no protocol took them); 0 frames from it sent by kv1:0\n"),
            std::string::npos)
      << r.out;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_PASS"], 2);
  EXPECT_EQ(st["pass_tap"], nlohmann::json({{"name", "kp0"},
                                            {"passed", 2},
                                            {"refused", 0},
                                            {"from_host", 0},
                                            {"from_host_refused", 0},
                                            {"stack_dropped", 1},
                                            {"from_host_dropped", 0}}));
  EXPECT_EQ(::if_nametoindex("kp0"), 0u) << "the TAP knod made outlived it";
}

/// Writes the IPv4 header checksum (RFC 791) of the 20-byte header at `ip`.
void ip_checksum(uint8_t* ip) {
  ip[10] = ip[11] = 0;
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i] << 8 | ip[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  ip[10] = uint8_t(~sum >> 8), ip[11] = uint8_t(~sum);
}

// --pass-tap both ways: an echo request icmp_echo does not answer (10.1.0.2 is not in its map)
// goes to the host's stack through kp0 (10.1.0.2/24); the stack's echo reply leaves by kp0
// (10.1.0.9 a static neighbour there), and knod sends it out of kv1, so that it arrives on kv0.
TEST(RunXsk, PassTapSendsTheHostsAnswersOutOfThePort) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid =
      start_pass_tap(run, "--map-load " + kIcmpMaps + " --stats " + dir + "/stats.json", dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  ASSERT_EQ(std::system("ip addr add 10.1.0.2/24 dev kp0 && ip neigh add 10.1.0.9 lladdr "
                        "02:00:00:00:00:09 dev kp0 nud permanent"),
            0);
  const Socket cap{::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP))};  // what arrives on kv0
  ASSERT_GE(cap.fd, 0) << strerror(errno);
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_IP);
  at.sll_ifindex = static_cast<int>(::if_nametoindex("kv0"));
  ASSERT_EQ(::bind(cap.fd, reinterpret_cast<sockaddr*>(&at), sizeof at), 0) << strerror(errno);
  timeval tv{10, 0};
  setsockopt(cap.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  // 02:..:09 -> kv1 (02:..:02), IPv4 10.1.0.9 -> 10.1.0.2, ICMP echo id 0x1234 seq 1.
  std::vector<uint8_t> f = {2,    0,    0, 0,   0,   2,   2,   0,    0,   0,   0,  9, 0x08,
                            0x00, 0x45, 0, 0,   36,  0,   1,   0x40, 0,   64,  1,  0, 0,
                            10,   1,    0, 9,   10,  1,   0,   2,    8,   0,   0,  0, 0x12,
                            0x34, 0,    1, 'k', 'n', 'o', 'd', '-',  'r', 'e', 'v'};
  ip_checksum(&f[14]);
  uint32_t sum = 0;
  for (size_t i = 34; i < f.size(); i += 2) sum += uint32_t(f[i] << 8 | f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  f[36] = uint8_t(~sum >> 8), f[37] = uint8_t(~sum);
  send_frame("kv0", f);
  bool replied = false;
  for (int i = 0; i < 20 && !replied; ++i) {
    uint8_t got[128];
    sockaddr_ll from{};
    socklen_t fl = sizeof from;
    const ssize_t n =
        ::recvfrom(cap.fd, got, sizeof got, 0, reinterpret_cast<sockaddr*>(&from), &fl);
    ASSERT_GT(n, 0) << "no echo reply on kv0: " << strerror(errno);
    if (from.sll_pkttype == PACKET_OUTGOING || n < 42 || got[23] != 1 || got[34] != 0) continue;
    replied = true;
    EXPECT_EQ(n, 50);
    EXPECT_EQ(std::memcmp(got, "\x02\0\0\0\0\x09\x02\0\0\0\0\x02", 12), 0);  // to .9 from kp0
    EXPECT_EQ(std::memcmp(got + 26, "\x0a\x01\0\x02\x0a\x01\0\x09", 8), 0);  // 10.1.0.2 -> .9
    EXPECT_EQ(std::memcmp(got + 38, "\x12\x34\0\x01knod-rev", 12), 0);
  }
  EXPECT_TRUE(replied);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_PASS"], 1) << st.dump();
  EXPECT_EQ(st["pass_tap"]["passed"], 1) << st.dump();
  EXPECT_EQ(st["pass_tap"]["from_host"], 1) << st.dump();
  EXPECT_EQ(st["pass_tap"]["from_host_refused"], 0) << st.dump();
  EXPECT_EQ(st["pass_tap"]["stack_dropped"], 0) << st.dump();  // the echo request was taken
}

// The --pass-tap interface deleted under a running knod ends the run as a port's would.
TEST(RunXsk, PassTapDeletedMidRunEndsTheRun) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid = start_pass_tap(run, "--stats " + dir + "/stats.json", dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  ASSERT_EQ(std::system("ip link del kp0"), 0);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  EXPECT_EQ(r.rc, 1);
  // Found by poll(2) or by the read after it, whichever comes first.
  EXPECT_EQ(r.err.rfind("knod: --pass-tap kp0: the interface went away", 0), 0u) << r.err;
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["port_error"].get<std::string>().rfind("--pass-tap kp0: the interface went away", 0),
            0u)
      << st.dump();
}

// An ICMP echo request from 10.0.0.1 to 10.0.0.2 (icmp_echo answers it with XDP_TX), valid
// checksums (RFC 1071), 42 bytes.
std::vector<uint8_t> echo_request() {
  std::vector<uint8_t> f = {2,    0, 0, 0,  0,    2,    2, 0, 0,  0, 0, 1, 0x08, 0x00,  // Ethernet
                            0x45, 0, 0, 28, 0,    1,    0, 0, 64, 1, 0, 0,              // IPv4
                            10,   0, 0, 1,  10,   0,    0, 2,                           //
                            8,    0, 0, 0,  0x12, 0x34, 0, 1};                          // echo
  auto sum = [&](size_t at, size_t n, size_t check) {
    uint32_t c = 0;
    for (size_t i = at; i < at + n; i += 2) c += uint32_t(f[i] << 8 | f[i + 1]);
    while (c >> 16) c = (c & 0xffff) + (c >> 16);
    f[check] = uint8_t(~c >> 8), f[check + 1] = uint8_t(~c);
  };
  sum(14, 20, 24);
  sum(34, 8, 36);
  return f;
}

// Sends `frames` out of kv0 from CPU `cpu`, past the qdisc (PACKET_QDISC_BYPASS): the kernel
// then puts them on kv0's TX queue cpu % 2 (packet_pick_tx_queue records cpu % 2 as the
// skb's queue, and skb_tx_hash takes it where kv0 has no XPS map, as in a new namespace), and
// a veth gives a frame to its peer's RX queue of that number (veth_xmit) when the peer runs
// XDP in the driver (xdpdrv): knod's program runs on it there. Under generic XDP the frame
// arrives on the RX queue one below that number, 0 for TX queue 0 (netif_get_rxqueue).
void send_from_cpu(int cpu, const std::vector<std::vector<uint8_t>>& frames) {
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0) << strerror(errno);
    const Socket sock{::socket(AF_PACKET, SOCK_RAW, 0)};
    ASSERT_GE(sock.fd, 0) << strerror(errno);
    const int on = 1;
    ASSERT_EQ(::setsockopt(sock.fd, SOL_PACKET, PACKET_QDISC_BYPASS, &on, sizeof on), 0);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(::if_nametoindex("kv0"));
    to.sll_halen = 6;
    for (const auto& f : frames)
      ASSERT_EQ(::sendto(sock.fd, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                         sizeof to),
                static_cast<ssize_t>(f.size()))
          << strerror(errno);
  });
  t.join();
}

// A NIC spreads its traffic over several RX queues: knod takes each queue given (--xsk kv1:0
// --xsk kv1:1), a socket each, under one program and XSKMAP. kv0 and kv1 have two queues
// each; 5 frames sent from an even CPU arrive on queue 0, 7 from an odd CPU on queue 1
// (send_from_cpu). XDP_TX leaves by the socket of the frame's queue. Where `generic`, kv0's MTU
// is too large for the driver's XDP (veth_xdp_set: "Peer MTU is too large to set XDP"), knod
// falls back to generic XDP, and all 12 come to queue 0 (netif_get_rxqueue: the TX queue less
// one, or 0), as knod's warning says.
void two_queues(bool generic) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu[2] = {-1, -1};  // an even and an odd CPU this test may use
  for (int c = CPU_SETSIZE - 1; c >= 0; --c)
    if (CPU_ISSET(c, &mine)) cpu[c % 2] = c;
  if (cpu[0] < 0 || cpu[1] < 0)
    GTEST_SKIP() << "needs an even and an odd CPU to send on both of kv0's TX queues";
  if (std::string why = enter_netns_with_veth(2); !why.empty()) GTEST_SKIP() << why;
  if (generic) {
    ASSERT_EQ(std::system("ip link set dev kv0 mtu 65535"),
              0);  // above veth's XDP limit on 4-64 KiB pages
  }
  const std::string dir = temp_dir();
  std::future<Result> run;
  std::string why;
  const pid_t pid =
      start_knod(run,
                 kIcmpEcho + " --map-load " + kIcmpMaps +
                     " --xsk kv1:0 --xsk kv1:1 -c 12 --duration 30 --stats " + dir + "/stats.json",
                 dir, why);
  if (!pid && why.find("Address family not supported") != std::string::npos)
    GTEST_SKIP() << "no AF_XDP in this kernel: " << why;
  ASSERT_NE(pid, 0) << why;
  // 60-byte frames of EtherType 0x88b5 (XDP_PASS): 4 on queue 0, 6 on queue 1; one echo
  // request on each.
  std::vector<uint8_t> other(60, 0);
  std::copy_n(echo_request().begin(), 12, other.begin());
  other[12] = 0x88, other[13] = 0xb5;
  send_from_cpu(cpu[0], {other, other, echo_request(), other, other});
  send_from_cpu(cpu[1], {other, other, other, other, other, other, echo_request()});
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result r = run.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string kv1 = std::to_string(::if_nametoindex("kv1"));
  const std::string mode = generic ? "xdpgeneric" : "xdpdrv";
  EXPECT_NE(r.out.find("12 packets, 684 bytes from xsk kv1:0 (ifindex " + kv1 + ", " + mode +
                       ", copy), xsk kv1:1 (ifindex " + kv1 + ", " + mode + ", copy)\n"),
            std::string::npos)
      << r.out;
  const int rx[2] = {generic ? 12 : 5, generic ? 0 : 7}, tx[2] = {generic ? 2 : 1, generic ? 0 : 1};
  for (int q = 0; q < 2; ++q)
    EXPECT_NE(r.out.find("xsk kv1:" + std::to_string(q) + ": " + std::to_string(rx[q]) +
                         " frames in; out: " + std::to_string(tx[q]) + " XDP_TX, 0 XDP_REDIRECT\n"),
              std::string::npos)
        << r.out;
  EXPECT_EQ(r.err, generic ? "knod: warning: --xsk kv1:1: knod's program runs as generic XDP (the "
                             "driver has no XDP of its own, or refused it), where a frame's RX "
                             "queue is the one its driver recorded: the queue may get none (on a "
                             "veth, a frame arrives on the peer's TX queue minus one, 0 for TX "
                             "queue 0: with two queues, all on queue 0)\n"
                           : "");
  const auto st = nlohmann::json::parse(read_file(dir + "/stats.json"));
  EXPECT_EQ(st["verdicts"]["XDP_TX"], 2);
  EXPECT_EQ(st["verdicts"]["XDP_PASS"], 10);
  ASSERT_EQ(st["ports"].size(), 2u);
  for (int q = 0; q < 2; ++q) {
    EXPECT_EQ(st["ports"][q]["queue"], q);
    EXPECT_EQ(st["ports"][q]["rx"], rx[q]);
    EXPECT_EQ(st["ports"][q]["tx"], tx[q]);
  }
  uint32_t id = 0;
  bpf_xdp_query_id(static_cast<int>(::if_nametoindex("kv1")), 0, &id);
  EXPECT_EQ(id, 0u) << "knod left its program on kv1";
}

TEST(RunXsk, TwoQueuesOfOneInterface) {
  two_queues(false);
}

// Generic XDP: knod warns that queue 1 may get nothing, and on a veth it does.
TEST(RunXsk, TwoQueuesInGenericMode) {
  two_queues(true);
}

// knod holds its program through a BPF link: the kernel takes it down when knod dies, even
// by SIGKILL, and the interface is free for the next run.
TEST(RunXsk, SigkillLeavesNoProgramBehind) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  auto run = std::async(std::launch::async, [&] {
    return knod("run " + kIcmpEcho +
                " --xsk kv1 --duration 60 -q & p=$!; i=0; "
                "until ip link show kv1 | grep -q prog/xdp; do i=$((i+1)); [ $i -gt 600 ] && "
                "break; sleep 0.1; done; kill -KILL $p; wait $p");
  });
  ASSERT_EQ(run.wait_for(std::chrono::seconds(90)), std::future_status::ready);
  EXPECT_EQ(run.get().rc, 128 + 9);
  uint32_t id = 1;
  for (int i = 0; i < 100 && id; ++i) {
    bpf_xdp_query_id(static_cast<int>(::if_nametoindex("kv1")), 0, &id);
    if (id) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(id, 0u) << "knod's program outlived it";
  Result r = knod("run " + kIcmpEcho + " --xsk kv1 --duration 0.1");
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
