#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs into one archive for a GPU machine that has the NVIDIA
# driver but none of knod's build dependencies (no LLVM 19, libbpf, libpcap, ...): the GPU
# check's binaries from an existing build (stripped), every shared library they load that is
# not glibc's or libstdc++'s (RUNPATH set to $PREFIX/lib, so nothing else on that machine
# loads them), the example objects and the conformance suite.
#   scripts/gpu-bundle.sh [BUILD] [OUT.tar.xz]   (defaults: build, .gpu/bundle.tar.xz)
# On the GPU machine, in a copy of this repository:
#   mkdir -p /work/knod-gpu && tar -xJf .gpu/bundle.tar.xz -C /work/knod-gpu
#   scripts/gpu-check.sh --prebuilt /work/knod-gpu
# The binaries keep the absolute paths they were built with (KNOD_SHARED_DIR, the example
# directories); gpu-check.sh --prebuilt links those paths to the unpacked copies.
# Needs patchelf(1) and xz(1).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ARCHIVE=${2:-.gpu/bundle.tar.xz}
PREFIX=/work/knod-gpu
command -v patchelf >/dev/null || { echo "gpu-bundle: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
T=$(mktemp -d /tmp/knod-gpu-bundle.XXXXXX)
trap 'rm -rf "$T"' EXIT

BINS="src/cli/knod tests/gpu/test_gpu_cuda_run tests/gpu/test_gpu_cuda_persistent
      tests/gpu/test_gpu_nodriver tests/gpu/knod_gpu_bench tests/gpu/knod_devices_cli"
ninja -C "$BUILD" $(for b in $BINS; do basename "$b"; done) \
  $(for e in l4lb ddos vlan icmp_echo proto_count tailcall nat44 router; do
      printf 'xdp_example_%s gpu_example_%s ' "$e" "$e"; done) >/dev/null
mkdir -p "$T/lib" "$T/build/examples/xdp" "$T/build/tests/gpu/examples" "$T/shared"
for b in $BINS; do
  mkdir -p "$T/build/$(dirname "$b")"
  strip -o "$T/build/$b" "$BUILD/$b"
  patchelf --set-rpath "$PREFIX/lib" "$T/build/$b"
done
# Shared libraries: everything ldd resolves except the C and C++ runtimes.
for b in $BINS; do ldd "$BUILD/$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+)\.so' |
  while read -r lib; do
    name=$(basename "$lib")
    cp -L "$lib" "$T/lib/$name"
    chmod u+w "$T/lib/$name"
    strip --strip-unneeded "$T/lib/$name" 2>/dev/null || true
    patchelf --set-rpath "$PREFIX/lib" "$T/lib/$name"
  done
cp "$BUILD"/examples/xdp/*.o "$T/build/examples/xdp/"
cp "$BUILD"/tests/gpu/examples/*.o "$T/build/tests/gpu/examples/"
SHARED=$(sed -n 's/^KNOD_SHARED_DIR:PATH=//p' "$BUILD/CMakeCache.txt")
cp -r "$SHARED/conformance" "$T/shared/"
# Where the binaries expect things, for gpu-check.sh --prebuilt.
{
  echo "source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")"
  echo "build_dir=$(cd "$BUILD" && pwd)"
  echo "shared_dir=$SHARED"
  echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo -dirty)"
} >"$T/paths"
mkdir -p "$(dirname "$ARCHIVE")"
tar -C "$T" -cf - . | xz -T2 -6 >"$ARCHIVE"
echo "gpu-bundle: $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1)): $(wc -l <"$T/paths") paths, $(ls "$T/lib" | wc -l) libraries"
