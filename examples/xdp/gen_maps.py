#!/usr/bin/env python3
"""Writes examples/xdp/<name>.maps.json, the map preloads of the example programs.

Addresses match the bundled captures (scripts/record-pcaps.sh): client 10.0.0.1 / fd00::1
(02:00:00:00:00:01), server 10.0.0.2 / fd00::2 (02:00:00:00:00:02), VLAN 100 on 10.0.100.0/24.
Keys and values are the map's bytes as the program sees them (host = little-endian for
integers, network order for addresses and ports), as hex. Format: README.md."""
import hashlib, ipaddress, json, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))


def ip4(a): return ipaddress.IPv4Address(a).packed
def ip6(a): return ipaddress.IPv6Address(a).packed
def mac(m): return bytes(int(x, 16) for x in m.split(":"))
def u32(v): return struct.pack("<I", v)
def hexs(b): return b.hex()
def entry(k, v): return {"key": hexs(k), "value": hexs(v)}


def maglev(backends, m):
    """Maglev lookup table population (Eisenbud et al., NSDI'16, Pseudocode 1)."""
    perm = []
    for name in backends:
        h = hashlib.sha256(name.encode()).digest()
        offset = int.from_bytes(h[:8], "little") % m
        skip = int.from_bytes(h[8:16], "little") % (m - 1) + 1
        perm.append((offset, skip))
    nxt = [0] * len(backends)
    table = [-1] * m
    filled = 0
    while True:
        for i, (offset, skip) in enumerate(perm):
            c = (offset + nxt[i] * skip) % m
            while table[c] >= 0:
                nxt[i] += 1
                c = (offset + nxt[i] * skip) % m
            table[c] = i
            nxt[i] += 1
            filled += 1
            if filled == m:
                return table


def l4lb():
    ring = 251
    services = [  # (vip, port, proto, backend ids)
        ("10.0.0.2", 80, 6, [0, 1, 2]),      # http.pcap
        ("10.0.0.2", 5201, 6, [3, 4]),       # iperf3-tcp.pcap (and iperf3-udp's control)
        ("10.0.0.2", 5201, 17, [3, 4]),      # iperf3-udp.pcap
        ("10.0.0.2", 53, 17, [5, 6]),        # dns.pcap
    ]
    backends = [("10.1.0.%d" % (i + 1), "02:00:00:00:02:%02x" % (i + 1)) for i in range(7)]
    vip, table = [], []
    for sid, (addr, port, proto, ids) in enumerate(services):
        vip.append(entry(ip4(addr) + struct.pack(">H", port) + bytes([proto, 0]),
                         u32(sid) + u32(0)))
        for slot, b in enumerate(maglev([backends[i][0] for i in ids], ring)):
            table.append(entry(u32(sid * ring + slot), u32(ids[b])))
    return {
        "vip_map": vip,
        "maglev_table": table,
        "backends": [entry(u32(i), ip4(a) + mac(m) + b"\0\0") for i, (a, m) in enumerate(backends)],
        "lb_config": [entry(u32(0), ip4("10.0.0.3") + mac("02:00:00:00:00:03") + b"\0\0")],
    }


def ddos():
    return {
        "blocklist": [  # struct lpm_v4_key {u32 prefixlen; u8 addr[4]} -> rule id
            entry(u32(24) + ip4("10.0.100.0"), u32(1)),  # the VLAN 100 subnet (vlan.pcap)
            entry(u32(8) + ip4("192.0.2.0")[:1] + b"\0\0\0", u32(2)),
        ],
        # rate 50 pps, burst 20 packets per source, 8 SYNs per source per second
        "ddos_config": [entry(u32(0), struct.pack("<QQII", 50, 20, 8, 0))],
    }


def vlan():
    return {
        "vlan_egress": [  # u16 vid -> {u32 tx_port; u16 vid; u8 dst[6]; u8 src[6]; u16 pad}
            entry(struct.pack("<H", 100), struct.pack("<IH", 1, 0) + mac("02:00:00:00:00:02")
                  + mac("02:00:00:00:00:fe") + b"\0\0"),   # VLAN 100 -> port 1 untagged (pop)
            entry(struct.pack("<H", 0), struct.pack("<IH", 2, 200) + mac("02:00:00:00:01:02")
                  + mac("02:00:00:00:01:fe") + b"\0\0"),   # untagged -> port 2 on VLAN 200 (push)
        ],
        "tx_ports": [entry(u32(1), u32(11)), entry(u32(2), u32(12))],
    }


def icmp_echo():
    return {
        "local_v4": [entry(ip4("10.0.0.2"), u32(1)), entry(ip4("10.0.100.2"), u32(1))],
        "local_v6": [entry(ip6("fd00::2"), u32(1))],
    }


def tailcall():
    return {"jmp_table": [{"key": hexs(u32(p)), "prog": n}
                          for p, n in ((6, "xdp_tcp"), (17, "xdp_udp"), (1, "xdp_icmp"),
                                       (58, "xdp_icmp"))]}


def nat44():
    return {"snat_rules": [entry(ip4("10.0.0.1"), ip4("10.0.1.1"))]}


def router():
    return {"tx_ports": [entry(u32(i), u32(i)) for i in range(1, 9)]}


def proto_count():
    return {}


for name, fn in (("l4lb", l4lb), ("ddos", ddos), ("vlan", vlan), ("icmp_echo", icmp_echo),
                 ("tailcall", tailcall), ("nat44", nat44), ("router", router),
                 ("proto_count", proto_count)):
    maps = fn()
    lines = []
    for m, entries in maps.items():
        rows = ",\n".join("   " + json.dumps(e) for e in entries)
        lines.append('  "%s": [\n%s\n  ]' % (m, rows) if entries else '  "%s": []' % m)
    with open(os.path.join(HERE, name + ".maps.json"), "w") as f:
        f.write('{\n "maps": {\n' + ",\n".join(lines) + "\n }\n}\n" if lines
                else '{"maps": {}}\n')
