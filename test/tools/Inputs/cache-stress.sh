#!/usr/bin/env bash
# Eight processes of eight threads fill one cache directory at once, four
# with 12 kernels and four with those and 4 more; none fails. Then every kernel must be a hit,
# every entry must verify, no temporary file may remain, and a damaged
# entry must be detected and rebuilt.
# Usage: cache-stress.sh DIR MXFP4_JIT_COMPILE
set -euo pipefail
dir=$1
tool=$2
shapes=$dir/shapes.txt
cat > "$shapes" <<SHAPES
# N K BM
256 512 16
256 512 64
512 1024 16
512 384 64
768 640 16
256 1152 64
SHAPES
more=$dir/more.txt
cp "$shapes" "$more"
printf '1024 512 16\n1024 768 64\n' >> "$more"
rm -rf "$dir/cache"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  list=$shapes
  [ "$i" -gt 4 ] && list=$more
  "$tool" --shapes="$list" --arch=gfx950,gfx1250 --cache-dir="$dir/cache" -j 8 \
    > "$dir/run$i.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || { echo "a concurrent run failed:"; cat "$dir"/run*.log; exit 1; }
done
cat "$dir/run1.log"
# Every process got every kernel (compiled or a hit: the JIT compiles each
# at most once a process, JitTest.CompilesOncePerProcessUnderConcurrency).
for log in "$dir"/run*.log; do
  awk '/^kernels/ { gsub(/[:,]/, ""); ok = ($4 + $7 == $2 && $9 == 0) } END { exit !ok }' \
    "$log" || { echo "$log:"; cat "$log"; exit 1; }
done
shapes=$more
if find "$dir/cache" -name '*.tmp-*' | grep -q .; then
  echo "temporary files left behind"; exit 1
fi
echo "== all hits =="
MXFP4_ASSERT_CACHE_HIT=1 "$tool" --shapes="$shapes" --arch=gfx950,gfx1250 \
  --cache-dir="$dir/cache" --verify
echo "== damaged entry =="
victim=$(find "$dir/cache" -name '*.mxco' | sort | head -n 1)
head -c 100 "$victim" > "$victim.cut" && mv "$victim.cut" "$victim"
"$tool" --shapes="$shapes" --arch=gfx950,gfx1250 --cache-dir="$dir/cache" --verify 2>&1
MXFP4_ASSERT_CACHE_HIT=1 "$tool" --shapes="$shapes" --arch=gfx950,gfx1250 \
  --cache-dir="$dir/cache" --verify
