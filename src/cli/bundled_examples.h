// The bundled XDP examples (examples/xdp/README.md): program to run and the capture in
// examples/pcap it acts on. Shared by `knod bench --examples` and bench/jit.
#pragma once

namespace knod::cli {

struct BundledExample {
  const char* name;  ///< examples/xdp/<name>.c, built to <build>/examples/xdp/<name>.o
  const char* prog;  ///< entry program
  const char* pcap;  ///< examples/pcap/<pcap>
};

inline constexpr BundledExample kBundledExamples[] = {
    {"l4lb", "xdp_l4lb", "iperf3-tcp.pcap"},
    {"ddos", "xdp_ddos", "iperf3-udp.pcap"},
    {"vlan", "xdp_vlan", "vlan.pcap"},
    {"icmp_echo", "xdp_icmp_echo", "ping4.pcap"},
    {"proto_count", "xdp_proto_count", "frag.pcap"},
    {"tailcall", "xdp_dispatch", "http.pcap"},
    {"nat44", "xdp_nat44", "iperf3-tcp.pcap"},
    {"router", "xdp_router", "http.pcap"},
};

}  // namespace knod::cli
