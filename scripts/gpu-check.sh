#!/usr/bin/env bash
# GPU check, one command (about 10 minutes on an H200 with the defaults; 2026-11-30: the
# conformance suite 30-60 s, the differential checks 45 s, knod run 45 s, the benchmark about
# 45 s per example at 10 batches per point, persistent mode 100 s): builds knod's GPU pieces, runs the
# conformance suite on `cuda`, compares every example XDP program on `cuda` with the CPU
# (per-packet verdict, redirect, fault, bytes, then map contents), runs `knod run --device
# cuda` on the bundled examples and compares its pcaps, map dump and stats byte for byte with
# `--device cpu --workers 1`, benchmarks CUDA (Mpps per example at batch sizes 1K/16K/64K/1M
# with 64 B and 1500 B packets, device-resident and end-to-end through pinned host memory,
# with batch latency p50/p99), then does the `knod run` comparison in persistent mode
# (`--persistent`: one resident kernel fed through the mailbox ring) with its batch latency
# p50/p99 under a batch timeout.
# Writes the results table to $OUT/gpu-check.md if OUT is set (row by row, so a run cut short
# still reports what it did), else to stdout.
#   scripts/gpu-check.sh                  builds here (needs scripts/deps.sh's packages)
#   scripts/gpu-check.sh --prebuilt DIR   uses scripts/gpu-bundle.sh's unpacked archive instead,
#                                         for a GPU machine without knod's build dependencies
# Env: BUILD (build dir, default build-gpucheck), JOBS, DEVICE (default cuda:0),
#      BENCH_ITERS (batches per point, default 10), SKIP_CONFORMANCE=1, SKIP_DIFF=1, SKIP_BENCH=1,
#      RUN_TIMEOUT (s per knod run, default 60), WORK (keep the per-step logs there instead of a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PREBUILT=""
if [ "${1:-}" = --prebuilt ]; then PREBUILT=$(cd "$2" && pwd); fi
BUILD=${BUILD:-$ROOT/build-gpucheck}
JOBS=${JOBS:-$(nproc)}
DEVICE=${DEVICE:-cuda:0}
BENCH_ITERS=${BENCH_ITERS:-10}
if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d /tmp/knod-gpu-check.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
fi
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; REPORT=$OUT/gpu-check.md; else REPORT=$WORK/report.md; fi
: >"$REPORT"
started=$(date +%s)

log() { printf '[gpu-check %3ds] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
row() { printf '%s\n' "$*" >>"$REPORT"; }

# Example -> captures it acts on (examples/xdp/README.md).
declare -A CAPTURES=(
  [l4lb]="http dns iperf3-tcp iperf3-udp"
  [ddos]="vlan iperf3-udp"
  [vlan]="vlan"
  [icmp_echo]="ping4 ping6"
  [proto_count]="frag http"
  [tailcall]="http dns"
  [nat44]="http dns iperf3-udp"
  [router]="http"
)
declare -A PROGRAM=(
  [l4lb]=xdp_l4lb [ddos]=xdp_ddos [vlan]=xdp_vlan [icmp_echo]=xdp_icmp_echo
  [proto_count]=xdp_proto_count [tailcall]=xdp_dispatch [nat44]=xdp_nat44 [router]=xdp_router
)
EXAMPLES="l4lb ddos vlan icmp_echo proto_count tailcall nat44 router"

# ---- 1. build (or link a prebuilt bundle where its binaries expect it) -------------------
# link_to PATH TARGET: PATH (absolute, compiled into the binaries) is made to reach TARGET.
link_to() {
  local p
  p=$(realpath -m "$1")
  [ "$p" = "$(realpath -m "$2")" ] && return 0
  [ -e "$p" ] && { log "--prebuilt: $p exists, leaving it"; return 0; }
  mkdir -p "$(dirname "$p")" && ln -s "$2" "$p"
}
if [ -n "$PREBUILT" ]; then
  # shellcheck disable=SC1091
  . "$PREBUILT/paths"  # source_dir, build_dir, shared_dir, commit
  log "prebuilt bundle $PREBUILT (commit $commit)"
  link_to "$source_dir" "$ROOT"
  link_to "$build_dir" "$PREBUILT/build"
  link_to "$shared_dir" "$PREBUILT/shared"
  BUILD=$PREBUILT/build
else
  log "configure + build ($BUILD, -j$JOBS)"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$WORK/cmake.log" 2>&1 ||
    { tail -30 "$WORK/cmake.log"; exit 1; }
  ninja -C "$BUILD" -j"$JOBS" test_gpu_cuda_run test_gpu_cuda_persistent test_gpu_nodriver \
    knod_gpu_bench knod_devices_cli knod \
    $(for e in $EXAMPLES; do printf 'xdp_example_%s gpu_example_%s ' "$e" "$e"; done) \
    >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
fi
T=$BUILD/tests/gpu
OBJS=$T/examples

row "# knod GPU check ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
row ""
row '```'
"$T/knod_devices_cli" devices >>"$REPORT" 2>&1 || true
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total \
  --format=csv,noheader >>"$REPORT" 2>&1 || true
row '```'
if ! "$T/knod_devices_cli" devices --device "$DEVICE" >"$WORK/dev.txt" 2>&1; then
  cat "$WORK/dev.txt" >&2
  log "no usable CUDA device: stopping (see above)"
  [ -n "${OUT:-}" ] || cat "$REPORT"
  exit 1
fi

# ---- 2. conformance on cuda ------------------------------------------------------------
fail=0
if [ "${SKIP_CONFORMANCE:-0}" != 1 ]; then
log "conformance suite on $DEVICE"
pass=$(timeout 180 "$T/test_gpu_cuda_run" 2>&1 | tee "$WORK/conf.txt" | grep -c '^\[       OK \]' || true)
fail=$(grep '^\[  FAILED  \]' "$WORK/conf.txt" | grep -c 'MatchesTheSuite.*GetParam.* ms)$' || true)
skip=$(grep -c '^\[  SKIPPED \]' "$WORK/conf.txt" || true)
row ""
row "## Conformance on $DEVICE"
row ""
row "| passed | failed | skipped |"
row "|---|---|---|"
row "| $pass | $fail | $skip |"
if [ "$fail" != 0 ]; then
  row ""
  row '```'
  grep -B3 '^\[  FAILED  \]' "$WORK/conf.txt" | grep -v '^\[  FAILED  \].*listed' | head -60 >>"$REPORT"
  row '```'
fi
fi

# ---- 3. differential: cuda vs cpu on the example captures -------------------------------
diff_fail=0
declare -A SUPPORTED=()
if [ "${SKIP_DIFF:-0}" != 1 ]; then
log "differential checks (cuda vs cpu)"
row ""
row "## Examples: $DEVICE vs CPU (verdicts, redirects, faults, bytes, maps)"
row ""
row "| example | capture | packets | result |"
row "|---|---|---|---|"
for ex in $EXAMPLES; do
  for cap in ${CAPTURES[$ex]}; do
    pcap=$ROOT/examples/pcap/$cap.pcap
    maps=$ROOT/examples/xdp/$ex.maps.json
    [ -f "$maps" ] || maps=""
    [ -f "$pcap" ] || { row "| $ex | $cap | - | capture missing |"; continue; }
    # The CPU device's results, recorded now from the same build.
    if ! "$T/knod_gpu_bench" run --device cpu "$OBJS/$ex.o" "${PROGRAM[$ex]}" "$pcap" $maps \
        >"$WORK/$ex-$cap.cpu" 2>"$WORK/$ex-$cap.cpu.err"; then
      row "| $ex | $cap | - | CPU error: $(head -1 "$WORK/$ex-$cap.cpu.err") |"
      diff_fail=$((diff_fail + 1))
      continue
    fi
    n=$(grep -c '^pkt ' "$WORK/$ex-$cap.cpu" || true)
    if ! timeout 120 "$T/knod_gpu_bench" run --device "$DEVICE" "$OBJS/$ex.o" "${PROGRAM[$ex]}" \
        "$pcap" $maps >"$WORK/$ex-$cap.cuda" 2>"$WORK/$ex-$cap.cuda.err"; then
      msg=$(head -1 "$WORK/$ex-$cap.cuda.err")
      case "$msg" in
        *"not supported on cuda yet"*) row "| $ex | $cap | $n | unsupported: ${msg#knod_gpu_bench: } |" ;;
        *) row "| $ex | $cap | $n | **CUDA error**: $msg |"; diff_fail=$((diff_fail + 1)) ;;
      esac
      continue
    fi
    if diff -q "$WORK/$ex-$cap.cpu" "$WORK/$ex-$cap.cuda" >/dev/null; then
      row "| $ex | $cap | $n | same |"
      SUPPORTED[$ex]=1
    else
      first=$(diff "$WORK/$ex-$cap.cpu" "$WORK/$ex-$cap.cuda" | grep '^[<>]' | head -2 | cut -c1-120 | tr '\n' ' ' || true) 
      row "| $ex | $cap | $n | **DIFFERS**: \`$first\` |"
      diff_fail=$((diff_fail + 1))
    fi
  done
done
fi

# ---- 3b. knod run --device cuda vs --device cpu (the main job) ---------------------------
# Batch 1 is the strict comparison. Batch 256 runs with one virtual CPU (--workers 1): every
# bundled example has per-CPU maps, so its packets run in order on one lane and should match
# too; nat44 (conntrack inserts) and ddos (token buckets) would differ with more CPUs, as on
# a multi-CPU kernel. Batch 256 is reported for information.
log "knod run --device $DEVICE vs --device cpu"
row ""
row "## knod run: $DEVICE vs cpu (pcaps per verdict, -w, map dump, stats)"
row ""
row "| example | capture | batch 1 | batch 256 (information) |"
row "|---|---|---|---|"
KNOD=$BUILD/src/cli/knod
declare -A RUN_PCAP=(
  [l4lb]=iperf3-tcp [ddos]=iperf3-udp [vlan]=vlan [icmp_echo]=ping4 [proto_count]=frag
  [tailcall]=http [nat44]=iperf3-tcp [router]=http
)
knod_run() {  # example device batch outdir [more knod run options]
  local ex=$1 dev=$2 batch=$3 d=$4 maps=()
  mkdir -p "$d"
  [ -f "$ROOT/examples/xdp/$ex.maps.json" ] && maps=(--map-load "$ROOT/examples/xdp/$ex.maps.json")
  timeout "${RUN_TIMEOUT:-60}" "$KNOD" run "$BUILD/examples/xdp/$ex.o" -p "${PROGRAM[$ex]}" \
    -r "$ROOT/examples/pcap/${RUN_PCAP[$ex]}.pcap" "${maps[@]}" --device "$dev" --workers 1 \
    --batch "$batch" --clock-ns 1000000000 --seed 7 -q -w "$d/all.pcap" \
    --aborted "$d/aborted.pcap" --drop "$d/drop.pcap" --pass "$d/pass.pcap" --tx "$d/tx.pcap" \
    --redirect "$d/redirect.pcap" --map-dump "$d/maps.json" --stats "$d/stats.json" \
    "${@:5}" 2>"$d/err" || return $?
  sed -i 's/"device": "[^"]*"/"device": "X"/' "$d/stats.json"
}
same_outputs() { diff -r -x err "$1" "$2" >/dev/null; }
run_fail=0
for ex in $EXAMPLES; do
  W=$WORK/run-$ex
  if ! knod_run "$ex" cpu 1 "$W/cpu"; then
    row "| $ex | ${RUN_PCAP[$ex]} | CPU error: $(head -1 "$W/cpu/err") | |"
    run_fail=$((run_fail + 1))
    continue
  fi
  if ! knod_run "$ex" "$DEVICE" 1 "$W/gpu1"; then
    msg=$(head -1 "$W/gpu1/err")
    case "$msg" in
      *"not supported on cuda yet"*) row "| $ex | ${RUN_PCAP[$ex]} | unsupported: ${msg#knod: } | |" ;;
      *) row "| $ex | ${RUN_PCAP[$ex]} | **error**: $msg | |"; run_fail=$((run_fail + 1)) ;;
    esac
    continue
  fi
  r1="same"
  same_outputs "$W/cpu" "$W/gpu1" || { r1="**DIFFERS**: $(diff -rq -x err "$W/cpu" "$W/gpu1" | head -3 | tr '\n' ' ' || true)"; run_fail=$((run_fail + 1)); }
  r256="error: see log"
  if knod_run "$ex" "$DEVICE" 256 "$W/gpu256"; then
    r256="same"
    same_outputs "$W/cpu" "$W/gpu256" || r256="differs: $(diff -rq -x err "$W/cpu" "$W/gpu256" | awk '{print $2}' | xargs -n1 basename | tr '\n' ' ' || true)"
  fi
  row "| $ex | ${RUN_PCAP[$ex]} | $r1 | $r256 |"
done
diff_fail=$((diff_fail + run_fail))

# ---- 4. benchmark (before persistent mode, the riskier part) -----------------------------
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  log "benchmark ($BENCH_ITERS batches per point)"
  row ""
  row "## CUDA throughput and batch latency ($DEVICE)"
  row ""
  row "e2e = pinned staging copy + H2D + kernel + D2H + map sync (wall clock); resident = kernel"
  row "only on packets already in device memory (CUDA events). 32768 virtual CPUs"
  row "(knod_gpu_bench --cpus): a program with per-CPU maps runs on at most 32768 lanes, and its"
  row "per-CPU maps (32768 slots) are copied back after every e2e batch."
  row ""
  row "| program | bytes | batch | mode | Mpps | p50 us | p99 us |"
  row "|---|---|---|---|---|---|---|"
  for ex in $EXAMPLES; do
    [ -n "${SUPPORTED[$ex]:-}" ] || continue
    maps=$ROOT/examples/xdp/$ex.maps.json
    [ -f "$maps" ] || maps=""
    if timeout 150 "$T/knod_gpu_bench" bench "$OBJS/$ex.o" "${PROGRAM[$ex]}" $maps \
        --iters "$BENCH_ITERS" >"$WORK/$ex.bench" 2>"$WORK/$ex.bench.err"; then
      tail -n +2 "$WORK/$ex.bench" | while IFS=$'\t' read -r p b n m mpps p50 p99; do
        row "| $p | $b | $n | $m | $mpps | $p50 | $p99 |"
      done
    else
      row "| ${PROGRAM[$ex]} | - | - | - | error: $(tail -1 "$WORK/$ex.bench.err") | | |"
    fi
  done
fi

# ---- 5. persistent mode: knod run --persistent vs --device cpu --------------------------
# The same outputs as the CPU with one resident kernel fed through the 3-slot mailbox ring
# (batch 1: see 3b); then batch 256 with a 50 us batch timeout for the latency figures
# (first packet read to results back, per batch; the stats' "persistent" object).
log "knod run --device $DEVICE --persistent"
row ""
row "## knod run --persistent: $DEVICE (mailbox ring) vs cpu"
row ""
timeout 120 "$T/test_gpu_cuda_persistent" >"$WORK/persistent-tests.txt" 2>&1 || true
ppass=$(grep -c '^\[       OK \]' "$WORK/persistent-tests.txt" || true)
pfail=$(grep -c '^\[  FAILED  \].* ms)$' "$WORK/persistent-tests.txt" || true)
row "test_gpu_cuda_persistent (sessions vs CPU JIT, ring wrap-around, stop in flight): $ppass passed, $pfail failed"
row ""
row "| example | capture | batch 1 | batch 256, 50 us timeout: batches (cut by timeout) | latency p50 us | p99 us |"
row "|---|---|---|---|---|---|"
# stats.json minus its "persistent" object, for comparison with the CPU's.
stats_core() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); s.pop("persistent",None); print(json.dumps(s,sort_keys=True))' "$1"; }
# "batches by_timeout p50_us p99_us" from a --persistent run's stats.json.
stats_latency() { python3 -c 'import json,sys; q=json.load(open(sys.argv[1]))["persistent"]; print(q["batches"], q["batches_by_timeout"], "%.1f" % (q["latency_p50_ns"]/1e3), "%.1f" % (q["latency_p99_ns"]/1e3))' "$1"; }
same_persistent() {  # cpu-dir persistent-dir
  diff -r -x err -x stats.json "$1" "$2" >/dev/null &&
    [ "$(stats_core "$1/stats.json")" = "$(stats_core "$2/stats.json")" ]
}
pers_fail=$pfail
for ex in $EXAMPLES; do
  W=$WORK/run-$ex
  [ -f "$W/cpu/stats.json" ] || continue  # no CPU reference (3b reported it)
  rc=0
  knod_run "$ex" "$DEVICE" 1 "$W/pers1" --persistent || rc=$?
  if [ "$rc" = 124 ]; then
    row "| $ex | ${RUN_PCAP[$ex]} | **hung** (killed after ${RUN_TIMEOUT:-60} s); the other examples not tried | | | |"
    pers_fail=$((pers_fail + 1))
    break
  fi
  if [ "$rc" != 0 ]; then
    msg=$(head -1 "$W/pers1/err")
    case "$msg" in
      *"not supported on cuda yet"*) row "| $ex | ${RUN_PCAP[$ex]} | unsupported | | | |" ;;
      *) row "| $ex | ${RUN_PCAP[$ex]} | **error**: $msg | | | |"; pers_fail=$((pers_fail + 1)) ;;
    esac
    continue
  fi
  r1="same"
  same_persistent "$W/cpu" "$W/pers1" || { r1="**DIFFERS**: $(diff -rq -x err "$W/cpu" "$W/pers1" | head -3 | tr '\n' ' ' || true)"; pers_fail=$((pers_fail + 1)); }
  lat="error: see log"
  p50="" p99=""
  if knod_run "$ex" "$DEVICE" 256 "$W/pers256" --persistent --batch-timeout-us 50; then
    read -r nb nt p50 p99 < <(stats_latency "$W/pers256/stats.json")
    lat="$nb ($nt)"
  fi
  row "| $ex | ${RUN_PCAP[$ex]} | $r1 | $lat | $p50 | $p99 |"
done
diff_fail=$((diff_fail + pers_fail))


row ""
row "Total time: $(( $(date +%s) - started )) s; conformance failures: $fail; example differences: $diff_fail."
if [ -n "${OUT:-}" ]; then
  log "results in $OUT/gpu-check.md"
else
  cat "$REPORT"
fi
[ "$fail" = 0 ] && [ "$diff_fail" = 0 ]
