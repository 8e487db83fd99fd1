#!/usr/bin/env bash
# Fuzzes the parsers and readers that take untrusted bytes (fuzz/): kernel
# names, tuned CSVs, disk cache entries, and the host entry points' shape
# checks at int64 extremes. Builds them with clang, libFuzzer, ASan and
# UBSan in a runtime-only configuration (no LLVM to rebuild), runs each for
# FUZZ_SECONDS (default 20) from its seed corpus, and fails on any crash,
# leak, sanitizer report, timeout or out-of-memory. A crash leaves its input
# under $FUZZ_ARTIFACTS (default build-fuzz/artifacts): add it to
# fuzz/corpus/<fuzzer>/ with the fix, as a regression input.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-20}
artifacts=${FUZZ_ARTIFACTS:-$build/artifacts}
cc=$(command -v clang-22 || command -v clang || true)
cxx=$(command -v clang++-22 || command -v clang++ || true)
[ -n "$cc" ] && [ -n "$cxx" ] || { echo "check-fuzz: no clang" >&2; exit 1; }
if [ ! -f "$build/build.ninja" ]; then
  CC=$cc CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMXFP4_RUNTIME_ONLY=ON -DMXFP4_FUZZ=ON > /dev/null
fi
fuzzers=(kernel-name tuned-csv cache-entry shape-checks)
ninja -C "$build" "${fuzzers[@]/#/mxfp4-fuzz-}"
mkdir -p "$artifacts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=()
for f in "${fuzzers[@]}"; do
  mkdir -p "$tmp/$f"
  # New inputs go to the scratch corpus; the seeds are read only.
  if ! "$build/bin/mxfp4-fuzz-$f" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$f-" "$tmp/$f" "$root/fuzz/corpus/$f" \
      > "$tmp/$f.log" 2>&1; then
    tail -40 "$tmp/$f.log" >&2
    echo "check-fuzz: $f failed; the input is in $artifacts" >&2
    exit 1
  fi
  runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$tmp/$f.log")
  summary+=("$f $runs runs")
done
echo "check-fuzz: OK (${seconds} s each: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g'))"
