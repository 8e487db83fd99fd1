#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, with carry ["dist"]): one
# mxfp4-bench run (peers off) per argument string, for tile sweeps; the
# output goes to $OUT/sweep.log and is printed.
# Usage: scripts/device-sweep.sh "<mxfp4-bench args>" ["<args>" ...]
#   e.g. scripts/device-sweep.sh "--n=7168 --k=4224 --m=128 --bm=64,128 --split-k=1,3 --prequant=2"
set -uo pipefail
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
echo "bundle commit $(cat "$work/COMMIT")" | tee "$out/sweep.log"
for case in "$@"; do
  # A hung kernel must not take the whole device budget.
  # shellcheck disable=SC2086
  timeout "${SWEEP_TIMEOUT:-150}" "$work/bin/mxfp4-bench" $case --peers=false 2>&1 | grep -v "^N  " | tee -a "$out/sweep.log"
done
