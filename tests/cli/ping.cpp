#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cli_test.h"

namespace knod::cli_test {

namespace {
uint16_t csum(const uint8_t* p, size_t n) {  // RFC 1071
  uint32_t s = 0;
  for (size_t i = 0; i + 1 < n; i += 2) s += uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) s += uint32_t(p[n - 1] << 8);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s);
}
}  // namespace

void expect_echo_replies(const std::string& to_addr, const std::string& tag) {
  ASSERT_EQ(tag.size(), 8u);
  const Socket sock{::socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)};
  const int s = sock.fd;
  ASSERT_GE(s, 0) << strerror(errno);
  timeval tv{10, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  inet_pton(AF_INET, to_addr.c_str(), &to.sin_addr);
  for (uint8_t seq = 0; seq < 3; ++seq) {
    uint8_t req[16] = {8, 0, 0, 0, 0x12, 0x34, 0, seq};
    std::memcpy(req + 8, tag.data(), 8);
    const uint16_t c = csum(req, sizeof req);
    req[2] = uint8_t(c >> 8), req[3] = uint8_t(c);
    ASSERT_EQ(::sendto(s, req, sizeof req, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 16);
    uint8_t got[128];
    sockaddr_in from{};
    socklen_t fl = sizeof from;
    const ssize_t n = ::recvfrom(s, got, sizeof got, 0, reinterpret_cast<sockaddr*>(&from), &fl);
    ASSERT_EQ(n, 20 + 16) << "no echo reply for seq " << int(seq) << ": " << strerror(errno);
    EXPECT_EQ(from.sin_addr.s_addr, to.sin_addr.s_addr);
    EXPECT_EQ(got[20], 0);  // ICMP_ECHOREPLY
    EXPECT_EQ(got[8], 64);  // the TTL icmp_echo sets
    EXPECT_EQ(csum(got, 20), 0) << "IP header checksum";
    EXPECT_EQ(csum(got + 20, 16), 0) << "ICMP checksum";
    EXPECT_EQ(got[26], 0);
    EXPECT_EQ(got[27], seq);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(got + 28), 8), tag);
  }
}

namespace {
sockaddr_ll link_of(const std::string& dev) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(::if_nametoindex(dev.c_str()));
  to.sll_halen = 6;
  return to;
}
}  // namespace

void send_frame(const std::string& dev, const std::vector<uint8_t>& frame) {
  const Socket sock{::socket(AF_PACKET, SOCK_RAW, 0)};
  ASSERT_GE(sock.fd, 0) << strerror(errno);
  const sockaddr_ll to = link_of(dev);
  ASSERT_EQ(::sendto(sock.fd, frame.data(), frame.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                     sizeof to),
            static_cast<ssize_t>(frame.size()))
      << strerror(errno);
}

void send_frames(const std::string& dev, int n) {
  const Socket sock{::socket(AF_PACKET, SOCK_RAW, 0)};
  ASSERT_GE(sock.fd, 0) << strerror(errno);
  const sockaddr_ll to = link_of(dev);
  // To 02:00:00:00:00:02 from 02:00:00:00:00:01, EtherType 0x88b5 (local experimental).
  uint8_t f[60] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5};
  for (int i = 0; i < n; ++i) {
    f[14] = uint8_t(i), f[15] = uint8_t(i >> 8);
    ASSERT_EQ(::sendto(sock.fd, f, sizeof f, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
              60)
        << strerror(errno);
  }
}

}  // namespace knod::cli_test
