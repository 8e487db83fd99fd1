#!/usr/bin/env bash
# Checks the MXFP4_RUNTIME_ONLY build: it configures and compiles without
# LLVM; libmxfp4jit-rt.so and the example linked against the runtime-only
# libraries need no LLVM/MLIR/lld shared object and contain no LLVM code;
# the .so exports only mxfp4:: and mxfp4_* (C API) symbols; the example runs entirely from an
# AOT cache filled by the full build (every kernel a disk hit under
# MXFP4_ASSERT_CACHE_HIT=1); an empty cache, a corrupt entry and another
# version's entries are clear errors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
rt=${RUNTIME_BUILD_DIR:-$root/build-runtime}
if [ ! -f "$rt/build.ninja" ]; then
  cmake -S "$root" -B "$rt" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_RUNTIME_ONLY=ON > /dev/null
fi
ninja -C "$rt" mxfp4jit-rt mxfp4-example-dense-gemm
ninja -C "$build" mxfp4-example-dense-gemm
fail() { echo "check-runtime-only: $*" >&2; exit 1; }
# No LLVM at all: not looked for, not included, not linked.
if grep -q '^\(LLVM\|MLIR\)_DIR:PATH=..*' "$rt/CMakeCache.txt"; then
  fail "the runtime-only build configured LLVM/MLIR"
fi
if grep -q 'llvm-[0-9]*/include\|/include/llvm' "$rt/compile_commands.json"; then
  fail "the runtime-only build compiles against LLVM headers"
fi
so=$rt/lib/libmxfp4jit-rt.so
example=$rt/bin/mxfp4-example-dense-gemm
for f in "$so" "$example"; do
  if ldd "$f" | grep -Eq 'libLLVM|libMLIR|liblld|libz3|libzstd'; then
    fail "$f links LLVM dynamically: $(ldd "$f" | tr '\n' ' ')"
  fi
  if nm -C "$f" | grep -Eq '(llvm|mlir|lld)::'; then
    fail "$f contains LLVM code: $(nm -C "$f" | grep -E '(llvm|mlir|lld)::' | head -3)"
  fi
done
foreign=$(nm -D --defined-only "$so" | c++filt | awk '{ $1=""; $2=""; print }' | sed 's/^ *//' \
  | grep -Ev '^(mxfp4::|mxfp4_)' || true)
[ -z "$foreign" ] || fail "libmxfp4jit-rt.so exports symbols outside mxfp4:: and mxfp4_*: $(echo "$foreign" | head -5)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_failure() { # expect_failure TEXT command...: fails, and stderr says TEXT
  local text=$1; shift
  if "$@" > "$tmp/out" 2> "$tmp/err"; then fail "'$*' succeeded; expected: $text"; fi
  grep -qF "$text" "$tmp/err" || fail "'$*' failed without '$text': $(cat "$tmp/err")"
}
expect_failure "not in the AOT cache (cannot read AOT cache directory" \
  env MXFP4_CACHE_DIR="$tmp/cache" "$example"
mkdir "$tmp/cache"
expect_failure "not in the AOT cache (no kernels built by" env MXFP4_CACHE_DIR="$tmp/cache" "$example"

# Fill the cache with the full build (the example JITs and stores its kernels).
MXFP4_CACHE_DIR="$tmp/cache" "$build/bin/mxfp4-example-dense-gemm" > "$tmp/fill"
built=$(grep -c ' compiled (' "$tmp/fill") || fail "the full build compiled nothing: $(cat "$tmp/fill")"
# Another version's entries next to ours change nothing.
mkdir -p "$tmp/cache/0000000000000000"
echo "mxfp4-jit 0.0.0 (old); LLVM 22.1.8; " > "$tmp/cache/0000000000000000/FINGERPRINT"
MXFP4_CACHE_DIR="$tmp/cache" MXFP4_ASSERT_CACHE_HIT=1 "$example" > "$tmp/serve"
hits=$(grep -c ' disk cache (' "$tmp/serve" || true)
[ "$hits" -eq "$built" ] || fail "served $hits of $built kernels from the AOT cache: $(cat "$tmp/serve")"

# A corrupt entry cannot be rebuilt here: a clear error.
entry=$(ls "$tmp"/cache/*/gemm_a4w4_gfx950_*.mxco | head -1)
printf 'garbage' | dd of="$entry" bs=1 seek=200 conv=notrunc status=none
expect_failure "corrupt cache entry" env MXFP4_CACHE_DIR="$tmp/cache" "$example"
grep -qF "cannot compile" "$tmp/err" || fail "corrupt entry: no 'cannot compile' in: $(cat "$tmp/err")"

echo "check-runtime-only: OK (libmxfp4jit-rt.so $(($(stat -c %s "$so") / 1024)) KiB," \
  "$(nm -D --defined-only "$so" | wc -l) mxfp4:: symbols; $hits kernels served from the AOT cache)"
