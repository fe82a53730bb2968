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

echo "== build (RelWithDebInfo)"
bash scripts/build.sh
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"

if [ "${KNOD_NO_SANITIZE:-0}" != 1 ]; then
  echo "== build (ASan+UBSan)"
  cmake -S . -B build-asan -G Ninja -DKNOD_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build-asan ${KNOD_JOBS:+-j"$KNOD_JOBS"}
  echo "== tests (ASan+UBSan)"
  # Interop scripts spawn Python/tshark (not ours to instrument); everything else runs.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -E 'interop' "$@"
fi
