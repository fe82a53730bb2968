#!/usr/bin/env bash
# Records the bundled captures in examples/pcap/ from real traffic between two network
# namespaces joined by veth pairs. Addresses (10.0.0.0/24, 10.0.100.0/24, fd00::/64) exist
# only inside the namespaces; nothing leaves the machine.
#
#   knod-cli  veth-cli 02:00:00:00:00:01  10.0.0.1  fd00::1   vlan-cli 02:00:00:00:01:01  10.0.100.1
#   knod-srv  veth-srv 02:00:00:00:00:02  10.0.0.2  fd00::2   vlan-srv 02:00:00:00:01:02  10.0.100.2
#
# The vlan-* pair carries 802.1Q VLAN 100: a tc (cls_bpf, direct-action) program pushes the
# tag on egress and pops it on ingress at both ends (kernels without CONFIG_VLAN_8021Q and
# act_vlan still have bpf_skb_vlan_push/pop), so the capture on vlan-cli holds tagged frames
# both ways.
#
# Services on the server: HTTP :80 (python3 -m http.server), DNS :53/udp (a tiny python
# responder), iperf3 :5201. Captures are taken on the client's interface (both directions)
# with checksum and segmentation offloads off, so every frame is a real, checksummed,
# <= MTU packet.
#
# Usage (root): scripts/record-pcaps.sh [outdir]   (default: examples/pcap)
# Needs: ip, tc, tcpdump, ping, curl, python3, dig, iperf3, ethtool, clang-19 (Debian:
# iproute2 tcpdump iputils-ping curl dnsutils iperf3 ethtool clang-19 libbpf-dev).
# Every step is bounded by `timeout`; namespaces are deleted on exit.
set -euo pipefail

OUT=${1:-"$(cd "$(dirname "$0")/.." && pwd)/examples/pcap"}
CLI=knod-cli
SRV=knod-srv
PIDS=()
WORK=$(mktemp -d /tmp/knod-pcap.XXXXXX)

[[ $(id -u) -eq 0 ]] || { echo "record-pcaps.sh: must run as root" >&2; exit 1; }
for t in ip tc tcpdump ping curl python3 dig iperf3 ethtool clang-19; do
  command -v "$t" >/dev/null || { echo "record-pcaps.sh: missing tool: $t" >&2; exit 1; }
done

cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$CLI" 2>/dev/null || true
  ip netns del "$SRV" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

inc() { ip netns exec "$CLI" "$@"; }

build_vlan_tc() {
  cat >"$WORK/vlan_tc.c" <<'CEOF'
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
SEC("tc") int vlan_tc(struct __sk_buff *skb) {
#ifdef PUSH
  bpf_skb_vlan_push(skb, bpf_htons(0x8100), 100);
#else
  if (skb->vlan_present) bpf_skb_vlan_pop(skb);
#endif
  return TC_ACT_OK;
}
char _license[] SEC("license") = "GPL";
CEOF
  local cc=(clang-19 -target bpf -O2 -I/usr/include/x86_64-linux-gnu -c "$WORK/vlan_tc.c")
  "${cc[@]}" -DPUSH -o "$WORK/vlan_push.o"
  "${cc[@]}" -o "$WORK/vlan_pop.o"
}

# addif <ns> <dev> <mac> <ipv4/len> [ipv6/len]
addif() {
  local ns=$1 dev=$2
  ip -n "$ns" link set "$dev" address "$3"
  ip netns exec "$ns" ethtool -K "$dev" tx off rx off tso off gso off gro off >/dev/null 2>&1
  ip -n "$ns" addr add "$4" dev "$dev"
  [[ -z ${5:-} ]] || ip -n "$ns" addr add "$5" dev "$dev" nodad
  ip -n "$ns" link set "$dev" up
}

setup() {
  ip netns add "$CLI"
  ip netns add "$SRV"
  local ns dev
  for ns in "$CLI" "$SRV"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0
    ip -n "$ns" link set lo up
  done
  ip link add veth-cli netns "$CLI" type veth peer name veth-srv netns "$SRV"
  addif "$CLI" veth-cli 02:00:00:00:00:01 10.0.0.1/24 fd00::1/64
  addif "$SRV" veth-srv 02:00:00:00:00:02 10.0.0.2/24 fd00::2/64
  ip link add vlan-cli netns "$CLI" type veth peer name vlan-srv netns "$SRV"
  addif "$CLI" vlan-cli 02:00:00:00:01:01 10.0.100.1/24
  addif "$SRV" vlan-srv 02:00:00:00:01:02 10.0.100.2/24
  build_vlan_tc
  for ns in "$CLI" "$SRV"; do
    [[ $ns == "$CLI" ]] && dev=vlan-cli || dev=vlan-srv
    ip netns exec "$ns" tc qdisc add dev "$dev" clsact
    ip netns exec "$ns" tc filter add dev "$dev" egress bpf da obj "$WORK/vlan_push.o" sec tc
    ip netns exec "$ns" tc filter add dev "$dev" ingress bpf da obj "$WORK/vlan_pop.o" sec tc
  done
  # Let IPv6 link-local setup settle so it does not land in the captures.
  sleep 1
}

start_servers() {
  mkdir -p "$WORK/www"
  python3 -c 'import sys
lines = ["<html><body><h1>knod</h1>"] + ["<p>packet %d of the test page</p>" % i for i in range(60)]
open(sys.argv[1], "w").write("\n".join(lines) + "</body></html>\n")' "$WORK/www/index.html"
  (cd "$WORK/www" && exec ip netns exec "$SRV" python3 -m http.server 80 --bind :: \
     >/dev/null 2>&1) &
  PIDS+=($!)
  cat >"$WORK/dns.py" <<'EOF'
# Minimal authoritative DNS responder (RFC 1035 4.1): A/AAAA for *.knod.test, else NXDOMAIN.
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.0.2", 53))
while True:
    q, peer = s.recvfrom(512)
    tid, flags, qd = struct.unpack("!HHH", q[:6])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode()); i += 1 + q[i]
    qtype, _ = struct.unpack("!HH", q[i + 1:i + 5])
    question = q[12:i + 5]
    name = ".".join(labels).lower()
    ans = b""
    if name.endswith("knod.test") and qtype in (1, 28):
        rdata = socket.inet_pton(socket.AF_INET if qtype == 1 else socket.AF_INET6,
                                 "10.0.0.80" if qtype == 1 else "fd00::80")
        ans = b"\xc0\x0c" + struct.pack("!HHIH", qtype, 1, 300, len(rdata)) + rdata
    rcode = 0 if ans or name.endswith("knod.test") else 3
    hdr = struct.pack("!HHHHHH", tid, 0x8400 | (flags & 0x0100) | rcode, 1, 1 if ans else 0, 0, 0)
    s.sendto(hdr + question + ans, peer)
EOF
  ip netns exec "$SRV" python3 "$WORK/dns.py" &
  PIDS+=($!)
  ip netns exec "$SRV" iperf3 -s -B 10.0.0.2 >/dev/null 2>&1 &
  PIDS+=($!)
  sleep 1.5
}

# capture <name> <dev> <max packets> <tcpdump filter> -- <command run in knod-cli...>
capture() {
  local name=$1 dev=$2 count=$3 filter=$4
  shift 5
  local file="$OUT/$name.pcap"
  ip netns exec "$CLI" timeout 30 tcpdump -i "$dev" --immediate-mode -nn -U -c "$count" -w "$file" $filter 2>/dev/null &
  local tpid=$!
  sleep 0.7
  inc timeout 20 "$@" >/dev/null 2>&1 || echo "  ($name: command exited $?)" >&2
  sleep 1
  kill -INT "$tpid" 2>/dev/null || true
  wait "$tpid" 2>/dev/null || true
  printf '%-16s %5s packets %8s bytes\n' "$name.pcap" \
    "$(tcpdump -nn -r "$file" 2>/dev/null | wc -l)" "$(stat -c %s "$file")"
}

mkdir -p "$OUT"
setup
start_servers

# Each capture starts cold or warm as it comes: ARP/ND appear where the kernel sends them.
capture ping4      veth-cli 64  "arp or icmp" -- ping -c 4 -i 0.2 10.0.0.2
capture ping6      veth-cli 64  "icmp6"       -- ping -6 -c 4 -i 0.2 fd00::2
capture http       veth-cli 200 "tcp port 80" -- curl -s -o /dev/null http://10.0.0.2/
capture http6      veth-cli 200 "tcp port 80" -- curl -s -o /dev/null "http://[fd00::2]/"
capture dns        veth-cli 64  "udp port 53" -- dig @10.0.0.2 +tries=1 +time=2 +noedns www.knod.test A \
                                         www.knod.test AAAA nope.example A
capture iperf3-tcp veth-cli 600 "tcp port 5201" -- iperf3 -c 10.0.0.2 -t 1 -b 1M -l 1200
capture iperf3-udp veth-cli 300 "port 5201"   -- iperf3 -c 10.0.0.2 -u -t 1 -b 1M -l 1200
capture vlan       vlan-cli 64  ""  -- sh -c 'ping -c 4 -i 0.2 10.0.100.2 && \
                                               curl -s -o /dev/null http://10.0.100.2/'
capture frag       veth-cli 64  "ip or ip6"   -- sh -c 'ping -c 2 -i 0.2 -s 3000 10.0.0.2 && \
                                               ping -6 -c 2 -i 0.2 -s 3000 fd00::2'
echo "total: $(du -cb "$OUT"/*.pcap | tail -1 | cut -f1) bytes in $OUT"
