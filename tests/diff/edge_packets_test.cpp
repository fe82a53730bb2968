// The crafted packets are what their names say (checked against RFC 1071 sums here, so the
// differential test's corner cases are real corners).
#include "edge_packets.h"

#include <gtest/gtest.h>

#include <set>

namespace knod::diff {
namespace {

const EdgePacket* find(const std::vector<EdgePacket>& v, const std::string& name) {
  for (const auto& e : v)
    if (e.name == name) return &e;
  return nullptr;
}

uint16_t be16(const std::vector<uint8_t>& b, size_t at) {
  return uint16_t(b[at] << 8 | b[at + 1]);
}

TEST(EdgePackets, NamesAreUniqueAndSizesInTestRunRange) {
  const auto v = edge_packets();
  std::set<std::string> names;
  for (const auto& e : v) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_LE(e.data.size(), 3520u) << e.name;
  }
  EXPECT_EQ(find(v, "runt-13")->data.size(), 13u);
  EXPECT_EQ(find(v, "eth-only-14")->data.size(), 14u);
  EXPECT_EQ(find(v, "jumbo-udp4-3520")->data.size(), 3520u);
}

TEST(EdgePackets, TunedChecksumsHaveTheWantedValue) {
  const auto v = edge_packets();
  // ICMP checksum at L4 offset 2: IPv4 14 + 20, IPv6 14 + 40.
  EXPECT_EQ(be16(find(v, "icmp4-echo-csum-0")->data, 14 + 20 + 2), 0x0000);
  EXPECT_EQ(be16(find(v, "icmp4-echo-csum-63488")->data, 14 + 20 + 2), 0xf800);
  EXPECT_EQ(be16(find(v, "icmp6-echo-csum-2047")->data, 14 + 40 + 2), 0x07ff);
  // A QinQ frame starts with the 802.1ad TPID, then 802.1Q.
  const auto& q = find(v, "qinq-300-100-udp")->data;
  EXPECT_EQ(be16(q, 12), 0x88a8);
  EXPECT_EQ(be16(q, 16), 0x8100);
  EXPECT_EQ(be16(q, 20), 0x0800);
}

}  // namespace
}  // namespace knod::diff
