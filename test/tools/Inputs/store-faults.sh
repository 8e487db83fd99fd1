#!/usr/bin/env bash
# Cache faults the AOT filler must report or survive: a cache directory that
# is a file, one entry whose path is a directory, entries that are a FIFO or
# a link to /dev/zero, a dump directory that is a file, and control bytes
# in a shapes file. Prints "== case ==" then the tool's output and status.
# Usage: store-faults.sh DIR MXFP4_JIT_COMPILE
set -uo pipefail
# shellcheck source=test/tools/Inputs/aot-cases.sh
source "$(dirname "$0")/aot-cases.sh"
touch "$dir/a-file"
run "cache is a file" --shapes="$dir/shapes" --arch=gfx950 --cache-dir="$dir/a-file"

# The fingerprint directory name, from a first fill.
"$tool" --shapes="$dir/shapes" --arch=gfx950 --cache-dir="$dir/c0" > /dev/null
fp=$(basename "$(dirname "$(ls "$dir"/c0/*/*.mxco | head -1)")")
first=$("$tool" --shapes="$dir/shapes" --arch=gfx950 --list | head -1)
mkdir -p "$dir/c1/$fp/$first.mxco"
run "one entry is a directory" --shapes="$dir/shapes" --arch=gfx950 --cache-dir="$dir/c1"
"$tool" --shapes="$dir/shapes" --arch=gfx950 --list | tail -1 > "$dir/second"
MXFP4_ASSERT_CACHE_HIT=1 run "the other entry is stored" --shapes="$dir/second" --arch=gfx950 \
  --cache-dir="$dir/c1"

for e in "$dir"/c0/*/*n256*.mxco; do rm "$e" && mkfifo "$e"; done
for e in "$dir"/c0/*/*n512*.mxco; do rm "$e" && ln -s /dev/zero "$e"; done
run "a fifo and a link" --shapes="$dir/shapes" --arch=gfx950 --cache-dir="$dir/c0"

printf 'gemm_a4w4_\033[31mRED\007\n' > "$dir/control"
run "control bytes" --shapes="$dir/control" --arch=gfx950 --cache-dir="$dir/c2" > "$dir/control.out"
cat "$dir/control.out"
if LC_ALL=C grep -q '[[:cntrl:]]' "$dir/control.out"; then echo "raw control bytes"; fi

MXFP4_DUMP_DIR="$dir/a-file" run "dump dir is a file" --shapes="$dir/shapes" --arch=gfx950 \
  --cache-dir="$dir/c3"
