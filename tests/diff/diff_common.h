// Inputs shared by the differential tests: the example objects and their preloads, the
// bundled captures plus the crafted edge packets, and small helpers.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/map_json.h"

namespace knod::diff {

/// examples/xdp object names (KNOD_XDP_EXAMPLES, from CMake), e.g. "l4lb".
std::vector<std::string> example_names();
std::string object_path(const std::string& name);   ///< <build>/examples/xdp/<name>.o
std::string preload_path(const std::string& name);  ///< examples/xdp/<name>.maps.json

/// A named packet sequence: a capture file ("dns.pcap") or "edge" (edge_packets()).
struct Input {
  std::string name;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> packets;  ///< (label, frame)
};
/// Every examples/pcap/*.pcap (sorted by name), then the edge packets.
std::vector<Input> all_inputs();
/// Just the bundled captures, as file paths (sorted).
std::vector<std::string> capture_paths();

/// The 4-byte values the preload gives the object's DEVMAP / DEVMAP_HASH maps (ports).
std::set<uint32_t> devmap_ports(const io::MapPreload& preload, const std::string& object);
/// True when a program of the object calls bpf_fib_lookup.
bool uses_fib_lookup(const std::string& object);

std::string hex(const std::vector<uint8_t>& b);

}  // namespace knod::diff
