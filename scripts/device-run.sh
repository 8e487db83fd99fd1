#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, with carry ["dist"]): unpacks the
# bundle, runs the GPU tests (seed printed) and the benchmark, writes JSON and
# logs under $OUT, and prints a short table last.
# Usage: scripts/device-run.sh [gtest filter] [bench args...]
set -uo pipefail
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
echo "bundle commit $(cat "$work/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
echo "== main job (README): JIT for three targets, run and check on this GPU =="
"$work/bin/mxfp4-example-dense-gemm" 2>&1 | tee "$out/main-job.log" | tail -4
echo "== runtime-only build: the same job served from that cache, no compiler linked =="
MXFP4_ASSERT_CACHE_HIT=1 "$work/bin/mxfp4-example-dense-gemm-rt" 2>&1 | tee "$out/runtime-only.log" \
  | tail -4
filter=${1:-*}
shift || true
"$work/bin/mxfp4-gpu-tests" --gtest_filter="$filter" --gtest_output="json:$out/gpu-tests.json" \
  > "$out/gpu-tests.log" 2>&1
tests_rc=$?
grep -E "^\[ (seed|numerics) |FAILED|Failure|PASSED|error" "$out/gpu-tests.log" | head -80
bench_args=("$@")
[ ${#bench_args[@]} -eq 0 ] && bench_args=(--preset=seed-dense)
"$work/bin/mxfp4-bench" "${bench_args[@]}" --json="$out/bench.json" > "$out/bench.log" 2>&1
bench_rc=$?
echo "== gpu tests rc=$tests_rc, bench rc=$bench_rc =="
cat "$out/bench.log"
exit $(( tests_rc != 0 || bench_rc != 0 ))
