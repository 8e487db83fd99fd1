#!/usr/bin/env bash
# Cache faults of the file system the AOT filler must report or survive: a
# full disk, a read-only cache (with and without the entries), a cache
# directory that does not exist yet, and temporary files a crashed writer
# left. The faults come from faultfs.so (LD_PRELOAD). Prints "== case =="
# then the tool's output and status.
# Usage: cache-faults.sh DIR MXFP4_JIT_COMPILE FAULTFS_SO
set -uo pipefail
faultfs=$3
# shellcheck source=test/tools/Inputs/aot-cases.sh
source "$(dirname "$0")/aot-cases.sh"
aot() { # label, tool args...: run on the shapes file for gfx950
  local label=$1
  shift
  run "$label" --shapes="$dir/shapes" --arch=gfx950 "$@"
}
# ASan (scripts/check-sanitizers.sh) wants its runtime first; the shim is.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
faulty() { # mode, dir, label, tool args...
  local mode=$1 where=$2
  shift 2
  MXFP4_FAULT=$mode MXFP4_FAULT_DIR=$where LD_PRELOAD=$faultfs aot "$@"
}
temporaries() { echo "temporaries left: $(find "$1" -name '.tmp-*' | wc -l)"; }

faulty enospc "$dir/full" "disk full" --cache-dir="$dir/full"
temporaries "$dir/full"
aot "space again" --cache-dir="$dir/full"
MXFP4_ASSERT_CACHE_HIT=1 aot "served after the disk filled" --cache-dir="$dir/full"

aot "fill" --cache-dir="$dir/ro" > /dev/null
faulty erofs "$dir/ro" "read-only cache holding the kernels" --cache-dir="$dir/ro"
mkdir -p "$dir/ro-empty"
faulty erofs "$dir/ro-empty" "read-only cache without them" --cache-dir="$dir/ro-empty"

aot "missing directory" --cache-dir="$dir/not/there/yet"
MXFP4_ASSERT_CACHE_HIT=1 aot "created and filled" --cache-dir="$dir/not/there/yet"

# A writer killed between write and rename leaves its temporary file; the
# next process that stores sweeps it once it is old (DiskCache::collect).
fp=$(basename "$(dirname "$(ls "$dir"/full/*/*.mxco | head -1)")")
touch -d '2 hours ago' "$dir/full/$fp/x.mxco.tmp-1234-0-0"
touch "$dir/full/$fp/y.mxco.tmp-1234-1-0"
printf '1024 512\n' > "$dir/shapes"
aot "a crashed writer's temporaries" --cache-dir="$dir/full"
ls -a "$dir/full/$fp" | grep -c 'tmp-' | sed 's/^/temporaries left: /'
