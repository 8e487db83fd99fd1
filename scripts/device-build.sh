#!/usr/bin/env bash
# Builds the GPU binaries with LLVM/MLIR linked statically (they then need
# only libc/libm on the GPU machine), strips them and packs them into a
# bundle (git-ignored) to `carry` to the device:
#   scripts/device-build.sh        dist/gpu-bundle.tar.xz: the GPU tests, the
#                                  benchmark and the main job (also runtime-only)
#   scripts/device-build.sh tune   dist/tune-bundle.tar.xz: mxfp4-tune,
#                                  mxfp4-jit-compile and the benchmark
#   scripts/device-build.sh examples  dist/examples-bundle.tar.xz: examples
#                                  03 to 05 (run them with
#                                  scripts/device-examples.sh)
# A bundle must stay under the carry limit (64 MiB): three static binaries.
# BUILD_DIR overrides ./build-static.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-static}
kind=${1:-tests}
"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_STATIC_LLVM=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin"
case "$kind" in
tests)
  ninja -C "$build" mxfp4-gpu-tests mxfp4-bench mxfp4-example-dense-gemm
  # The runtime-only example: serves the main job's kernels from its cache.
  rt=${RUNTIME_BUILD_DIR:-$root/build-runtime}
  if [ ! -f "$rt/build.ninja" ]; then
    cmake -S "$root" -B "$rt" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_RUNTIME_ONLY=ON
  fi
  ninja -C "$rt" mxfp4-example-dense-gemm
  for b in mxfp4-gpu-tests mxfp4-bench mxfp4-example-dense-gemm; do
    strip -o "$stage/bin/$b" "$build/bin/$b"
  done
  strip -o "$stage/bin/mxfp4-example-dense-gemm-rt" "$rt/bin/mxfp4-example-dense-gemm"
  bundle=gpu-bundle.tar.xz
  ;;
tune)
  ninja -C "$build" mxfp4-tune mxfp4-jit-compile mxfp4-bench
  for b in mxfp4-tune mxfp4-jit-compile mxfp4-bench; do
    strip -o "$stage/bin/$b" "$build/bin/$b"
  done
  bundle=tune-bundle.tar.xz
  ;;
examples)
  examples=(mxfp4-example-fused-moe mxfp4-example-cuda-graph mxfp4-example-tuned-csv)
  ninja -C "$build" "${examples[@]}"
  for b in "${examples[@]}"; do
    strip -o "$stage/bin/$b" "$build/bin/$b"
  done
  bundle=examples-bundle.tar.xz
  ;;
*)
  echo "usage: $0 [tests|tune|examples]" >&2
  exit 2
  ;;
esac
git -C "$root" rev-parse --short=12 HEAD > "$stage/COMMIT" 2>/dev/null || echo unknown > "$stage/COMMIT"
mkdir -p "$root/dist"
tar -C "$stage" -cf - . | xz -T2 -6 > "$root/dist/$bundle"
ls -la "$root/dist/$bundle"
