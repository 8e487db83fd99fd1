#!/usr/bin/env bash
# Builds the GPU test and benchmark binaries with LLVM/MLIR linked statically
# (they then need only libc/libm on the GPU machine), strips them and packs
# them, with the runtime-only build of the example, into dist/gpu-bundle.tar.xz (git-ignored), to `carry` to the device.
# Usage: scripts/device-build.sh            (BUILD_DIR overrides ./build-static)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-static}
"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_STATIC_LLVM=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
ninja -C "$build" mxfp4-gpu-tests mxfp4-bench mxfp4-example-dense-gemm
# The runtime-only example: serves the main job's kernels from its cache.
rt=${RUNTIME_BUILD_DIR:-$root/build-runtime}
if [ ! -f "$rt/build.ninja" ]; then
  cmake -S "$root" -B "$rt" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_RUNTIME_ONLY=ON
fi
ninja -C "$rt" mxfp4-example-dense-gemm
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin"
for b in mxfp4-gpu-tests mxfp4-bench mxfp4-example-dense-gemm; do
  strip -o "$stage/bin/$b" "$build/bin/$b"
done
strip -o "$stage/bin/mxfp4-example-dense-gemm-rt" "$rt/bin/mxfp4-example-dense-gemm"
git -C "$root" rev-parse --short=12 HEAD > "$stage/COMMIT" 2>/dev/null || echo unknown > "$stage/COMMIT"
mkdir -p "$root/dist"
tar -C "$stage" -cf - . | xz -T2 -6 > "$root/dist/gpu-bundle.tar.xz"
ls -la "$root/dist/gpu-bundle.tar.xz"
