#!/usr/bin/env bash
# Runs on the GPU machine (the `run` tool, with carry ["dist"]): profiles the
# GEMM kernel of each benchmark case with Nsight Compute and writes one
# report per case under $OUT (profile-<i>.txt), printing the key lines.
# Usage: scripts/device-profile.sh "<mxfp4-bench args>" ["<args>" ...]
#   e.g. scripts/device-profile.sh "--n=7168 --k=4224 --m=128 --bm=128 --split-k=3 --prequant=2"
# PROFILE_SECTIONS overrides the ncu sections, PROFILE_KERNEL the kernel regex,
# PROFILE_SKIP the launches skipped (8 reaches the first tuned run when the
# case passes --bm/--split-k/--prequant), PROFILE_METRICS adds metrics.
# PROFILE_SASS=1 also samples warp stalls per instruction and writes the
# kernel's SASS with them (profile-<i>-sass.csv: where the cycles go).
set -uo pipefail
# shellcheck source=scripts/device-unpack.sh
source "$(dirname "$0")/device-unpack.sh"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 1; }
sections=${PROFILE_SECTIONS:-SpeedOfLight MemoryWorkloadAnalysis WarpStateStats Occupancy LaunchStats}
args=()
for s in $sections; do args+=(--section "$s"); done
[ -n "${PROFILE_SASS:-}" ] && args+=(--section SourceCounters --section WarpStateStats)
i=0
for case in "$@"; do
  i=$((i + 1))
  rep=()
  [ -n "${PROFILE_SASS:-}" ] && rep=(--export "$out/profile-$i" --force-overwrite)
  # The bench's warm-up and first timed runs are skipped; one launch is profiled.
  # shellcheck disable=SC2086
  "$ncu" "${args[@]}" "${rep[@]}" --kernel-name "regex:${PROFILE_KERNEL:-gemm_}" --launch-skip "${PROFILE_SKIP:-2}" \
    --launch-count 1 ${PROFILE_METRICS:+--metrics "$PROFILE_METRICS"} "$work/bin/mxfp4-bench" $case --reps=3 --peers=false \
    > "$out/profile-$i.txt" 2>&1
  if [ -n "${PROFILE_SASS:-}" ]; then
    "$ncu" --import "$out/profile-$i.ncu-rep" --page details >> "$out/profile-$i.txt" 2>&1
    "$ncu" --import "$out/profile-$i.ncu-rep" --page source --csv --print-source sass \
      > "$out/profile-$i-sass.csv" 2>&1
    rm -f "$out/profile-$i.ncu-rep"
  fi
  echo "== case $i: $case"
  grep -E "gemm_|stalled|Duration|Throughput|Registers|Achieved Occupancy|Warp Cycles Per Issued|Issued Ipc|Stall|L2 Hit|Block Limit|Waves" \
    "$out/profile-$i.txt" | head -40
done
