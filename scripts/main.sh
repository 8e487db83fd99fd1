#!/usr/bin/env bash
# The main job: build everything, print the CPU quantization table, then
# JIT-compile the dense A4W4 GEMM for gfx950, gfx1250 and sm_90a (printing
# what was built) and, when a GPU is present, run and check it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
"$build/bin/mxfp4-quant" --rows=2048 --k=7168
"$build/bin/mxfp4-example-dense-gemm"
