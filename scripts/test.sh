#!/usr/bin/env bash
# Runs every knod test: installs dependencies, builds, runs ctest (unit, ISA conformance,
# kernel-differential, ESP interop, GPU code generation), then the same suite again in an
# ASan+UBSan build (skip that part with KNOD_NO_SANITIZE=1). KNOD_JOBS=N limits compile jobs.
# Needs ../shared (conformance suite) next to the repo. Tests that need bpf() (root) skip with
# a message where it is refused; tests that need an NVIDIA GPU skip where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

# Runs ctest on build dir $1 (more ctest arguments after it). On a failure the failed tests
# run once more, alone and with their output, so that the end of the log (all a CI page may
# keep) shows why; the first run's exit status stands either way.
run_ctest() {
  local dir=$1
  shift
  local rc=0
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "== the failed tests again, one at a time, with their output ($dir)"
    ctest --test-dir "$dir" --rerun-failed --output-on-failure || true
    echo "== first run failed (ctest exit $rc)"
  fi
  return "$rc"
}

echo "== build (RelWithDebInfo)"
bash scripts/build.sh
echo "== tests"
run_ctest build "$@"

if [ "${KNOD_NO_SANITIZE:-0}" != 1 ]; then
  echo "== build (ASan+UBSan)"
  cmake -S . -B build-asan -G Ninja -DKNOD_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build-asan ${KNOD_JOBS:+-j"$KNOD_JOBS"}
  echo "== tests (ASan+UBSan)"
  # Interop scripts spawn Python/tshark (not ours to instrument); everything else runs.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan -E 'interop' "$@"
fi
