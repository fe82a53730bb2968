#!/usr/bin/env bash
# Installs knod's build and test dependencies (Debian 12, as root). Idempotent and quiet when
# everything is already there.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config git
      llvm-19-dev llvm-19-tools clang-19 lld-19
      libbpf-dev libelf-dev zlib1g-dev libzstd-dev libpcap-dev libxdp-dev libssl-dev
      libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev
      tshark tcpdump python3-scapy python3-cryptography-vectors iproute2 bpftool clang-format)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "knod: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
