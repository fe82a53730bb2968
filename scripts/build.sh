#!/usr/bin/env bash
# Configures and builds knod into ./build (Release with debug info). Extra args go to cmake.
# KNOD_JOBS=N limits the parallel compile jobs (default: ninja's, cores + 2).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@" >/dev/null
ninja -C build ${KNOD_JOBS:+-j"$KNOD_JOBS"}
