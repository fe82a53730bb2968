#!/usr/bin/env bash
# The main job on bundled real input: installs what knod needs (Debian 12), builds it, and runs
# two bundled XDP programs over real captures on the CPU device (JIT):
#   - l4lb: an L4 load balancer; client packets to the VIP are IPIP-encapsulated (XDP_TX)
#   - ddos: LPM blocklist + per-source token bucket + SYN-flood guard (XDP_DROP / XDP_PASS),
#     on one worker: its token buckets depend on packet order, and one worker runs the packets
#     in capture order as one kernel CPU would (on all cores the drop count varies run to run)
# Packets are split by verdict into out/<prog>/{pass,tx,drop}.pcap (open them with tcpdump -r),
# counters go to out/<prog>/stats.json and the maps afterwards to out/<prog>/maps.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
echo "building knod (first time: ~10 minutes on 2 cores)..."
mkdir -p out
if ! bash scripts/build.sh >out/build.log 2>&1; then
  tail -n 30 out/build.log >&2
  echo "knod: the build failed (whole log: out/build.log)" >&2
  exit 1
fi
knod=build/src/cli/knod
for job in "l4lb iperf3-tcp" "ddos iperf3-tcp --workers 1"; do
  set -- $job
  prog=$1 pcap=$2
  shift 2
  mkdir -p "out/$prog"
  echo "== knod run build/examples/xdp/$prog.o -r examples/pcap/$pcap.pcap $*"
  "$knod" run "build/examples/xdp/$prog.o" -r "examples/pcap/$pcap.pcap" "$@" \
    --map-load "examples/xdp/$prog.maps.json" --pcap-clock \
    --pass "out/$prog/pass.pcap" --tx "out/$prog/tx.pcap" --drop "out/$prog/drop.pcap" \
    --stats "out/$prog/stats.json" --map-dump "out/$prog/maps.json"
  echo
done
echo "outputs in out/: e.g. tcpdump -nr out/l4lb/tx.pcap | head"
