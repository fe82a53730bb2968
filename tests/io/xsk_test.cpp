// io::XskPort against the running kernel, in a network namespace of the test's own (root:
// unshare(CLONE_NEWNET); skipped with a message where refused). The wire is a veth pair:
// XskPort owns queue 0 of kv1, a packet socket on kv0 is the other end. A frame kv0 sends is
// what XskPort reads (through knod's redirect program and the XSKMAP); a frame XskPort writes
// leaves kv1 and is what the packet socket on kv0 receives.
#include "io/xsk.h"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace {

using knod::io::Packet;
using knod::io::XskPort;

// kv0 <-> kv1 up, IPv6 off (no router solicitations or MLD reports on the wire), in this
// process's own network namespace (ctest runs each test in a process of its own).
// `queues`: each end's RX and TX queues.
std::string enter_netns_with_veth(int queues = 1) {
  if (::unshare(CLONE_NEWNET) != 0)
    return std::string("unshare(CLONE_NEWNET): ") + strerror(errno) + " (needs root)";
  const std::string q =
      " numtxqueues " + std::to_string(queues) + " numrxqueues " + std::to_string(queues);
  const std::string add = "ip link add kv0" + q + " type veth peer name kv1" + q;
  if (std::system(("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && " + add +
                   " && ip link set kv0 up && ip link set kv1 up")
                      .c_str()) != 0)
    return "cannot make a veth pair (" + add + ")";
  return "";
}

// A packet socket on `dev`: sends frames out of it and receives what arrives on it.
struct Wire {
  int fd = -1;
  int ifindex = 0;
  explicit Wire(const char* dev) {
    fd = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    ifindex = static_cast<int>(::if_nametoindex(dev));
    sockaddr_ll ll{};
    ll.sll_family = AF_PACKET;
    ll.sll_protocol = htons(ETH_P_ALL);
    ll.sll_ifindex = ifindex;
    ::bind(fd, reinterpret_cast<sockaddr*>(&ll), sizeof ll);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const int buf = 8 << 20;  // 100 frames of 1 KB at once: the default 208 KiB holds ~90
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  }
  ~Wire() { ::close(fd); }
  bool send(const std::vector<uint8_t>& f) const {
    return ::send(fd, f.data(), f.size(), 0) == static_cast<ssize_t>(f.size());
  }
  // The next frame that arrived (not one this side sent); empty after 5 s without one.
  std::vector<uint8_t> recv() const {
    std::vector<uint8_t> f(4096);
    for (;;) {
      sockaddr_ll from{};
      socklen_t fl = sizeof from;
      const ssize_t n =
          ::recvfrom(fd, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&from), &fl);
      if (n <= 0) return {};
      if (from.sll_pkttype == PACKET_OUTGOING) continue;
      f.resize(static_cast<size_t>(n));
      return f;
    }
  }
};

// An Ethernet frame of `len` bytes: 02:..:02 <- 02:..:01, ethertype 0x88b5 (IEEE local
// experimental: no stack handles it), then `tag` and a byte pattern.
std::vector<uint8_t> frame(size_t len, uint8_t tag) {
  std::vector<uint8_t> f(len);
  const uint8_t hdr[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5};
  std::memcpy(f.data(), hdr, 14);
  for (size_t i = 14; i < len; ++i) f[i] = uint8_t(tag + i);
  return f;
}

uint32_t attached_prog(const char* dev) {
  uint32_t id = 0;
  bpf_xdp_query_id(static_cast<int>(::if_nametoindex(dev)), 0, &id);
  return id;
}

TEST(XskPort, ParsesInterfaceAndQueue) {
  EXPECT_EQ(XskPort::parse("eth1"), std::make_pair(std::string("eth1"), 0u));
  EXPECT_EQ(XskPort::parse("eth1:3"), std::make_pair(std::string("eth1"), 3u));
  for (const char* bad :
       {"", ":1", "eth1:", "eth1:x", "eth1:-1", "eth1:70000", "kv1:0:0", "abcdefghijklmnop:0"})
    EXPECT_THROW(XskPort::parse(bad), knod::Error) << bad;
  try {
    XskPort::parse("eth1:q");
    FAIL();
  } catch (const knod::Error& e) {
    EXPECT_STREQ(e.what(), "--xsk 'eth1:q': expected IFACE or IFACE:QUEUE (a queue number)");
  }
}

TEST(XskPort, ReadsWhatItsQueueReceivesAndSendsWhatItWrites) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  std::optional<XskPort> port;
  try {
    port.emplace("kv1", 0);
  } catch (const knod::Error& e) {
    if (std::string(e.what()).find("Address family not supported") != std::string::npos)
      GTEST_SKIP() << "no AF_XDP in this kernel: " << e.what();
    throw;
  }
  EXPECT_EQ(port->name(), "kv1");
  EXPECT_EQ(port->ifindex(), ::if_nametoindex("kv1"));
  EXPECT_EQ(port->attach_mode(), "xdpdrv");  // veth has XDP of its own
  EXPECT_NE(attached_prog("kv1"), 0u);
  Wire kv0("kv0");
  Packet p;
  EXPECT_FALSE(port->read(p, 0));  // nothing sent yet: no wait

  // 100 frames in: each read in order, bytes as sent.
  for (uint8_t k = 0; k < 100; ++k) ASSERT_TRUE(kv0.send(frame(60 + k, k)));
  for (uint8_t k = 0; k < 100; ++k) {
    ASSERT_TRUE(port->read(p, 2000)) << "frame " << int(k) << " did not come";
    EXPECT_EQ(p.data, frame(60 + k, k)) << "frame " << int(k);
    EXPECT_EQ(p.wire_len, 60u + k);
    EXPECT_GT(p.ts_ns, 1'600'000'000'000'000'000u);  // CLOCK_REALTIME, after 2020
  }
  EXPECT_FALSE(port->read(p, 10));

  // 100 frames out (more than the 32 copy mode sends a sendto): kv0 receives each.
  for (uint8_t k = 0; k < 100; ++k) ASSERT_TRUE(port->write(frame(1000 + k, k ^ 0x5a)));
  port->flush();
  for (uint8_t k = 0; k < 100; ++k) {
    const std::vector<uint8_t> got = kv0.recv();
    ASSERT_EQ(got.size(), 1000u + k) << "frame " << int(k) << " did not arrive on kv0";
    EXPECT_EQ(got, frame(1000 + k, k ^ 0x5a));
  }
  EXPECT_EQ(port->write_errors(), 0u);
  EXPECT_EQ(port->kernel_drops(), 0u);
  EXPECT_FALSE(port->write(std::vector<uint8_t>(4097)));  // over a UMEM frame
  EXPECT_EQ(port->write_errors(), 1u);

  port.reset();  // closing detaches knod's program
  EXPECT_EQ(attached_prog("kv1"), 0u);
}

TEST(XskPort, FramesOverMaxLenAreCountedNotReturned) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  XskPort port("kv1", 0, XskPort::Mode::kAuto, 100);
  Wire kv0("kv0");
  ASSERT_TRUE(kv0.send(frame(101, 1)));
  ASSERT_TRUE(kv0.send(frame(100, 2)));
  Packet p;
  ASSERT_TRUE(port.read(p, 2000));
  EXPECT_EQ(p.data, frame(100, 2));
  EXPECT_EQ(port.skipped_too_large(), 1u);
}

TEST(XskPort, ErrorsNameTheInterfaceAndSayWhy) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  auto error_of = [](const std::string& dev, uint32_t q) -> std::string {
    try {
      XskPort p(dev, q);
    } catch (const knod::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of("nosuch0", 0), "--xsk nosuch0:0: no such interface");
  EXPECT_NE(error_of("kv1", 5).find("--xsk kv1:5: cannot open an AF_XDP socket on the queue ("),
            std::string::npos)
      << error_of("kv1", 5);            // a veth has one queue
  EXPECT_EQ(attached_prog("kv1"), 0u);  // nothing left behind
  XskPort first("kv1", 0);
  const std::string e = error_of("kv1", 0);
  EXPECT_EQ(e, "--xsk kv1:0: another knod holds the interface (its XDP program knod_xsk, id " +
                   std::to_string(attached_prog("kv1")) + ", is attached)");
  EXPECT_NE(attached_prog("kv1"), 0u);  // the first port's is still there
}

// The queues of one interface: one program, attached once every queue's socket is in its
// XSKMAP, and on until the last of the ports closes. A queue the interface does not have
// fails the whole open, and nothing is left attached.
TEST(XskPort, QueuesOfOneInterfaceShareOneProgram) {
  if (std::string why = enter_netns_with_veth(2); !why.empty()) GTEST_SKIP() << why;
  try {
    XskPort::open("kv1", {0, 5});
    ADD_FAILURE() << "kv1 has no queue 5";
  } catch (const knod::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--xsk kv1:5: cannot open an AF_XDP socket on the "
                                          "queue (Invalid argument",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_EQ(attached_prog("kv1"), 0u);
  auto ports = XskPort::open("kv1", {1, 0});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0]->queue(), 1u);
  EXPECT_EQ(ports[1]->queue(), 0u);
  EXPECT_EQ(ports[1]->attach_mode(), "xdpdrv");
  const uint32_t id = attached_prog("kv1");
  EXPECT_NE(id, 0u);
  ports[0].reset();  // the port that attached the program
  EXPECT_EQ(attached_prog("kv1"), id);
  ports[1].reset();
  EXPECT_EQ(attached_prog("kv1"), 0u);
  // stop_input on one port takes the program off for all (the end of a run).
  ports = XskPort::open("kv1", {0, 1});
  ports[1]->stop_input();
  EXPECT_EQ(attached_prog("kv1"), 0u);
}

// veth refuses its own XDP when the MTU leaves no room for a frame in a page: knod falls back
// to generic XDP, which takes any MTU (frames over a UMEM frame are the kernel's drops).
TEST(XskPort, FallsBackToGenericXdpWhereTheDriverRefuses) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(std::system("ip link set kv0 mtu 9000 && ip link set kv1 mtu 9000"), 0);
  XskPort port("kv1", 0);
  EXPECT_EQ(port.attach_mode(), "xdpgeneric");
  Wire kv0("kv0");
  ASSERT_TRUE(kv0.send(frame(3000, 7)));
  Packet p;
  ASSERT_TRUE(port.read(p, 2000));
  EXPECT_EQ(p.data, frame(3000, 7));
}

TEST(XskPort, AnInterfaceDeletedUnderItIsAnError) {
  if (std::string why = enter_netns_with_veth(); !why.empty()) GTEST_SKIP() << why;
  XskPort port("kv1", 0);
  ASSERT_EQ(std::system("ip link del kv1"), 0);  // kv0 goes with it
  const std::vector<knod::io::Port*> ports = {&port};
  try {  // the unbound socket polls as idle: wait_any asks SO_ERROR
    knod::io::wait_any(ports, 10);
    FAIL() << "no error for a deleted interface";
  } catch (const knod::Error& e) {
    EXPECT_STREQ(e.what(), "--xsk kv1:0: the interface went away (Network is down)");
  }
}  // closing it (detach from a deleted interface) is quiet

}  // namespace
