// io::TapPort against the running kernel, in a network namespace of the test's own (root:
// unshare(CLONE_NEWNET); skipped with a message where that or /dev/net/tun is refused). The
// kernel is the other side: a UDP datagram it sends to a neighbour on the interface is the
// frame TapPort reads, and a frame TapPort writes is what a UDP socket on it receives.
#include "io/tap.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace {

using knod::io::Packet;
using knod::io::TapPort;

// This thread's own network namespace (ctest runs each test in a process of its own), so
// that the interfaces and addresses below touch nothing of the machine's. Empty: entered.
std::string enter_netns() {
  if (::access("/dev/net/tun", R_OK | W_OK) != 0)
    return std::string("/dev/net/tun: ") + strerror(errno);
  if (::unshare(CLONE_NEWNET) != 0)
    return std::string("unshare(CLONE_NEWNET): ") + strerror(errno) + " (needs root)";
  return "";
}

void sh(const std::string& cmd) {
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// kt0 up as 10.9.0.1/24, with 10.9.0.2 a permanent neighbour at 02:00:00:00:00:02 (no ARP),
// IPv6 off (no router solicitations or MLD reports on the wire).
void configure(const std::string& dev) {
  sh("sysctl -qw net.ipv6.conf." + dev + ".disable_ipv6=1");
  sh("ip addr add 10.9.0.1/24 dev " + dev + " && ip link set " + dev + " up");
  sh("ip neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev " + dev + " nud permanent");
}

uint16_t be16(const uint8_t* p) {
  return uint16_t(p[0] << 8 | p[1]);
}

TEST(TapPort, NamesOutsideIfnamsizAreErrors) {
  EXPECT_THROW(TapPort(""), knod::Error);
  try {
    TapPort t("abcdefghijklmnop");  // 16 bytes: IFNAMSIZ with its NUL is 16
    FAIL() << "a 16-byte name was accepted";
  } catch (const knod::Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 to 15 bytes"), std::string::npos) << e.what();
  }
}

TEST(TapPort, ReadsWhatTheKernelSendsAndWritesWhatItReceives) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  TapPort tap("kt0");
  EXPECT_EQ(tap.name(), "kt0");
  EXPECT_GT(tap.ifindex(), 1u);  // lo is 1 in a new namespace
  // Down: the kernel refuses a frame (EIO) and counts it in rx_dropped too; it is one write
  // error, and no drop of the stack's.
  EXPECT_FALSE(tap.write(std::vector<uint8_t>(60, 0)));
  EXPECT_EQ(tap.write_errors(), 1u);
  EXPECT_EQ(tap.stack_drops(), 0u);
  configure("kt0");
  Packet p;
  EXPECT_FALSE(tap.read(p, 0));  // nothing sent yet: no wait

  // The kernel -> knod: a datagram to the neighbour leaves through kt0 as one frame.
  int tx = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(tx, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  inet_pton(AF_INET, "10.9.0.2", &to.sin_addr);
  const char msg[] = "knod-tap";
  ASSERT_EQ(::sendto(tx, msg, 8, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 8);
  ASSERT_TRUE(tap.read(p, 2000)) << "no frame within 2 s";
  ASSERT_EQ(p.data.size(), 14u + 20 + 8 + 8);
  EXPECT_EQ(p.wire_len, p.data.size());
  EXPECT_GT(p.ts_ns, 1'600'000'000ull * 1'000'000'000);  // wall clock, after 2020
  const uint8_t* f = p.data.data();
  const uint8_t neigh[6] = {2, 0, 0, 0, 0, 2};
  EXPECT_EQ(std::memcmp(f, neigh, 6), 0);  // to the neighbour's MAC
  EXPECT_EQ(be16(f + 12), 0x0800);         // IPv4
  EXPECT_EQ(f[14 + 9], 17);                // UDP
  EXPECT_EQ(std::memcmp(f + 14 + 12, "\x0a\x09\x00\x01\x0a\x09\x00\x02", 8), 0);
  EXPECT_EQ(be16(f + 34 + 2), 9);  // destination port
  EXPECT_EQ(std::memcmp(f + 42, msg, 8), 0);
  std::vector<uint8_t> own_mac(f + 6, f + 12);  // kt0's MAC, as the frame's source

  // knod -> the kernel: a frame to kt0's MAC, 10.9.0.2:4000 -> 10.9.0.1:5555.
  int rx = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(rx, 0);
  sockaddr_in me{};
  me.sin_family = AF_INET;
  me.sin_port = htons(5555);
  inet_pton(AF_INET, "10.9.0.1", &me.sin_addr);
  ASSERT_EQ(::bind(rx, reinterpret_cast<sockaddr*>(&me), sizeof me), 0) << strerror(errno);
  timeval tv{2, 0};
  setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<uint8_t> out(own_mac);
  out.insert(out.end(), neigh, neigh + 6);
  const uint8_t ip[20] = {0x45, 0, 0,  20 + 8 + 5, 0, 0, 0x40, 0, 64, 17,
                          0,    0, 10, 9,          0, 2, 10,   9, 0,  1};
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += be16(ip + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  out.insert(out.end(), {0x08, 0x00});
  out.insert(out.end(), ip, ip + 20);
  out[14 + 10] = uint8_t(~sum >> 8), out[14 + 11] = uint8_t(~sum);
  out.insert(out.end(), {0x0f, 0xa0, 0x15, 0xb3, 0, 13, 0, 0});  // 4000 -> 5555, no checksum
  out.insert(out.end(), {'r', 'e', 'p', 'l', 'y'});
  ASSERT_TRUE(tap.write(out));
  EXPECT_EQ(tap.write_errors(), 1u);  // the one while down
  char got[16] = {};
  sockaddr_in from{};
  socklen_t fl = sizeof from;
  ASSERT_EQ(::recvfrom(rx, got, sizeof got, 0, reinterpret_cast<sockaddr*>(&from), &fl), 5)
      << "the kernel did not deliver the written frame: " << strerror(errno);
  EXPECT_EQ(std::string(got, 5), "reply");
  EXPECT_EQ(ntohs(from.sin_port), 4000);
  EXPECT_EQ(tap.stack_drops(), 0u);  // delivered
  // A frame of an EtherType no protocol takes (0x88b5, local experimental): the stack drops
  // it and counts it in kt0's rx_dropped, twice for two.
  std::vector<uint8_t> odd(own_mac);
  odd.insert(odd.end(), neigh, neigh + 6);
  odd.insert(odd.end(), {0x88, 0xb5});
  odd.resize(60, 0);
  ASSERT_TRUE(tap.write(odd));
  ASSERT_TRUE(tap.write(odd));
  EXPECT_EQ(tap.stack_drops(), 2u);
  EXPECT_EQ(tap.kernel_drops(), 0u);  // its queue never full
  ::close(tx);
  ::close(rx);
}

TEST(TapPort, FramesOverMaxLenAreCountedNotReturned) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  TapPort tap("kt0", 100);  // bytes
  configure("kt0");
  int tx = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(tx, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  inet_pton(AF_INET, "10.9.0.2", &to.sin_addr);
  std::vector<char> big(100, 'x');  // a 142-byte frame
  ASSERT_EQ(::sendto(tx, big.data(), big.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
            100);
  ASSERT_EQ(::sendto(tx, big.data(), 10, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 10);
  Packet p;
  ASSERT_TRUE(tap.read(p, 2000));
  EXPECT_EQ(p.data.size(), 14u + 20 + 8 + 10);  // the big one was passed over
  EXPECT_EQ(tap.skipped_too_large(), 1u);
  ::close(tx);
}

TEST(TapPort, ANameTakenByAnotherKindOfInterfaceIsAnError) {
  if (std::string why = enter_netns(); !why.empty()) GTEST_SKIP() << why;
  try {
    TapPort t("lo");
    FAIL() << "attached to lo";
  } catch (const knod::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tap lo: cannot create or attach"), std::string::npos)
        << e.what();
  }
}

}  // namespace
