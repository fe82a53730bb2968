// A user-supplied forwarding table for bpf_fib_lookup and bpf_check_mtu: the routes,
// neighbours and interfaces the kernel would consult (net/core/filter.c bpf_ipv4_fib_lookup,
// bpf_ipv6_fib_lookup). JSON file format:
//   { "ifaces":     [ {"ifindex": 2, "mac": "02:00:00:00:00:02", "mtu": 1500,
//                      "forwarding": true} ],
//     "routes":     [ {"prefix": "10.0.0.0/8", "ifindex": 2, "gateway": "192.168.1.1",
//                      "type": "unicast", "metric": 0} ],
//     "neighbours": [ {"ip": "192.168.1.1", "mac": "02:00:00:00:00:01", "ifindex": 2} ] }
// "gateway" is optional (directly connected); "type" is unicast (default), blackhole,
// unreachable or prohibit; "forwarding" defaults to true; IPv6 prefixes and addresses work
// the same way. Longest prefix wins, then the lowest metric.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace knod::xdp {

struct FibIface {
  uint32_t ifindex = 0;
  std::array<uint8_t, 6> mac{};
  uint32_t mtu = 1500;
  bool forwarding = true;
};

/// An address: family AF_INET (4 bytes used) or AF_INET6 (16 bytes), network byte order.
struct FibAddr {
  int family = 0;
  std::array<uint8_t, 16> bytes{};
};

enum class RouteType : uint8_t { kUnicast, kBlackhole, kUnreachable, kProhibit };

struct FibRoute {
  FibAddr prefix;
  uint32_t prefix_len = 0;
  uint32_t ifindex = 0;
  bool has_gateway = false;
  FibAddr gateway;
  RouteType type = RouteType::kUnicast;
  uint32_t metric = 0;
};

struct FibNeighbour {
  FibAddr ip;
  std::array<uint8_t, 6> mac{};
  uint32_t ifindex = 0;
};

struct FibTable {
  std::vector<FibIface> ifaces;
  std::vector<FibRoute> routes;
  std::vector<FibNeighbour> neighbours;

  const FibIface* iface(uint32_t ifindex) const;
  /// Longest-prefix match for `dst` (same family), lowest metric on ties; or nullptr.
  const FibRoute* route(const FibAddr& dst) const;
  const FibNeighbour* neighbour(const FibAddr& ip, uint32_t ifindex) const;
};

/// Parses the JSON text above. Throws knod::Error naming the bad field.
FibTable parse_fib_table(const std::string& json_text);
/// Reads and parses a file. Throws knod::Error.
FibTable load_fib_table(const std::string& path);

}  // namespace knod::xdp
