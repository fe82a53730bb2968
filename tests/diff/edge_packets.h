// Crafted edge-case frames for the differential test: sizes at the test_run limits, cut
// headers, bad IHL, VLAN/QinQ, IPv6 extension chains, IPv4 options, fragments, odd ICMP
// lengths, and packets aimed at each example's policy (SYN flood, rate limit, FIB routes,
// telnet/chargen). Addresses follow examples/pcap/README.md (client 10.0.0.1 / fd00::1,
// server 10.0.0.2 / fd00::2); checksums are valid (RFC 1071) unless the name says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace knod::diff {

struct EdgePacket {
  std::string name;           ///< what it exercises, e.g. "ipv4-ihl-4"
  std::vector<uint8_t> data;  ///< frame bytes from the Ethernet header on
};

/// Every crafted frame, in a fixed order (state-carrying programs see the same sequence).
std::vector<EdgePacket> edge_packets();

}  // namespace knod::diff
