#!/usr/bin/env bash
# Builds everything and runs every test: GoogleTest and lit through ctest,
# then the static-LLVM and runtime-only build checks, the installed package,
# the sanitizer builds and the fuzzers (a fixed time each). GPU tests skip
# without a device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
"$root/scripts/check-static.sh"
"$root/scripts/check-runtime-only.sh"
"$root/scripts/check-install.sh"
"$root/scripts/check-sanitizers.sh"
"$root/scripts/check-fuzz.sh"
