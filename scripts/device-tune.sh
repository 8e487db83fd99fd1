#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, carry ["dist/tune-bundle.tar.xz"]
# from `scripts/device-build.sh tune`): tunes dense dispatch into
# $OUT/NAME, resuming from configs/NAME when the checkout has it (a run cut
# by the time limit keeps its rows: commit them there and run again). Then
# AOT from the CSV into a fresh cache, and the benchmark at the preset's
# points twice in one process each: served from that cache with the CSV
# (MXFP4_ASSERT_CACHE_HIT=1: nothing may compile) and with the tile table.
# Usage: scripts/device-tune.sh NAME PRESETS [mxfp4-tune args...]
set -uo pipefail
export BUNDLE=tune-bundle.tar.xz
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
name=$1
presets=$2
shift 2
csv="$out/$name"
[ -f "$root/configs/$name" ] && cp "$root/configs/$name" "$csv"
echo "bundle commit $(cat "$work/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
timeout "${TUNE_SECONDS:-420}" "$work/bin/mxfp4-tune" --preset="$presets" --out="$csv" "$@" \
  > "$out/tune.log" 2>&1
echo "== mxfp4-tune rc=$? =="
grep -E "^\[|summary|error|resuming|tuning|seed" "$out/tune.log" | tail -40
echo "== AOT from the CSV =="
"$work/bin/mxfp4-jit-compile" --from-csv="$csv" --cache-dir=/tmp/mxfp4-aot 2>&1 | tail -3
IFS=, read -ra list <<< "$presets"
for p in "${list[@]}"; do
  echo "== $p: tuned CSV, served from the AOT cache =="
  MXFP4_TUNED_CSV="$csv" MXFP4_CACHE_DIR=/tmp/mxfp4-aot MXFP4_ASSERT_CACHE_HIT=1 \
    "$work/bin/mxfp4-bench" --preset="$p" --json="$out/bench-$p-tuned.json" 2>&1 | tail -40
  echo "== $p: the tile table =="
  "$work/bin/mxfp4-bench" --preset="$p" --json="$out/bench-$p-table.json" 2>&1 | tail -40
done
