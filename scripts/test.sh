#!/usr/bin/env bash
# Runs every knod test: installs dependencies, builds, runs ctest (unit, conformance,
# kernel-differential, interop). Needs ../shared (conformance suite) next to the repo.
# Differential tests against the kernel need root and bpf(); they skip with a message otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
