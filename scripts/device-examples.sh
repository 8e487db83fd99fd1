#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, carry
# ["dist/examples-bundle.tar.xz"] from `scripts/device-build.sh examples`):
# examples 03 to 05 with their GPU parts, each one's output and status.
set -uo pipefail
export BUNDLE=examples-bundle.tar.xz
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
echo "bundle commit $(cat "$work/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
rc=0
for e in fused-moe cuda-graph tuned-csv; do
  echo "== mxfp4-example-$e =="
  "$work/bin/mxfp4-example-$e" 2>&1 | tail -20
  status=${PIPESTATUS[0]}
  echo "status $status"
  [ "$status" -eq 0 ] || rc=1
done
exit $rc
