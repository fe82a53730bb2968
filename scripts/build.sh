#!/usr/bin/env bash
# Configures and builds knod into ./build (Release with debug info). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@" >/dev/null
ninja -C build
