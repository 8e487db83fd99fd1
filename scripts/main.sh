#!/usr/bin/env bash
# The main job: build everything, then quantize a real-sized BF16 activation
# matrix with each scale-rounding mode and print the error table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
"$build/bin/mxfp4-quant" --rows=2048 --k=7168
