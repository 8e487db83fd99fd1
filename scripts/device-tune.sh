#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, carry ["dist/tune-bundle.tar.xz"]
# from `scripts/device-build.sh tune`): tunes dispatch into $OUT/NAME,
# resuming from configs/NAME when the checkout has it (a run cut by the
# time limit keeps its rows: commit them there and run again). Then AOT
# from the CSV into a fresh cache, and the benchmark twice in one process
# each: served from that cache with the CSV (MXFP4_ASSERT_CACHE_HIT=1:
# nothing may compile) and with the built-in choices.
# Usage: scripts/device-tune.sh NAME PRESETS|- [MOE_MODELS|-] [mxfp4-tune args...]
#   e.g. scripts/device-tune.sh h200.csv seed-dense,model-dense
#        scripts/device-tune.sh h200.csv - kimi-k3,gpt-oss-120b,deepseek-r1
set -uo pipefail
export BUNDLE=tune-bundle.tar.xz
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
name=$1
presets=${2:--}
models=${3:--}
shift $(( $# < 3 ? $# : 3 ))
csv="$out/$name"
[ -f "$root/configs/$name" ] && cp "$root/configs/$name" "$csv"
echo "bundle commit $(cat "$work/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
args=()
[ "$presets" != - ] && args+=(--preset="$presets")
[ "$models" != - ] && args+=(--moe="$models" --tokens="${TOKENS:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096}")
timeout "${TUNE_SECONDS:-420}" "$work/bin/mxfp4-tune" "${args[@]}" --out="$csv" "$@" \
  > "$out/tune.log" 2>&1
echo "== mxfp4-tune rc=$? =="
grep -E "^\[|summary|error|resuming|tuning|seed" "$out/tune.log" | tail -60
echo "== AOT from the CSV =="
"$work/bin/mxfp4-jit-compile" --from-csv="$csv" --cache-dir=/tmp/mxfp4-aot 2>&1 | tail -3
bench() { # label, bench args...
  local label=$1
  shift
  echo "== $label: tuned CSV, served from the AOT cache =="
  MXFP4_TUNED_CSV="$csv" MXFP4_CACHE_DIR=/tmp/mxfp4-aot MXFP4_ASSERT_CACHE_HIT=1 \
    "$work/bin/mxfp4-bench" "$@" --json="$out/bench-$label-tuned.json" 2>&1 | tail -45
  echo "== $label: built-in choices =="
  "$work/bin/mxfp4-bench" "$@" --json="$out/bench-$label-builtin.json" 2>&1 | tail -45
}
if [ "$presets" != - ]; then
  IFS=, read -ra list <<< "$presets"
  for p in "${list[@]}"; do bench "$p" --preset="$p"; done
fi
[ "$models" != - ] && bench moe --op=moe --models="$models"
exit 0
