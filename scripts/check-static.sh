#!/usr/bin/env bash
# Checks the MXFP4_STATIC_LLVM build: libmxfp4jit.so and a tool need only
# libc/libm (+ libstdc++ for the .so), the .so exports only mxfp4:: symbols,
# and the statically linked compiler still produces an HSA code object (with
# lld in process) and PTX.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${STATIC_BUILD_DIR:-$root/build-static}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMXFP4_STATIC_LLVM=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > /dev/null
fi
ninja -C "$build" mxfp4jit mxfp4-dump
fail() { echo "check-static: $*" >&2; exit 1; }
for f in "$build/lib/libmxfp4jit.so" "$build/bin/mxfp4-dump"; do
  if ldd "$f" | grep -Eq 'libLLVM|libMLIR|liblld|libz3'; then
    fail "$f links LLVM/MLIR dynamically: $(ldd "$f" | tr '\n' ' ')"
  fi
done
foreign=$(nm -D --defined-only "$build/lib/libmxfp4jit.so" | c++filt | awk '{ $1=""; $2=""; print }' \
  | sed 's/^ *//' | grep -Ev '^(mxfp4::|mxfp4_)' || true)
[ -z "$foreign" ] || fail "libmxfp4jit.so exports symbols outside mxfp4:: and mxfp4_*: $(echo "$foreign" | head -5)"
exported=$(nm -D --defined-only "$build/lib/libmxfp4jit.so" | wc -l)
[ "$exported" -gt 100 ] || fail "libmxfp4jit.so exports only $exported symbols"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/mxfp4-dump" --arch=gfx950 --n=1536 --k=768 --emit=obj -o "$tmp/k.hsaco"
head -c 4 "$tmp/k.hsaco" | grep -q ELF || fail "no HSA code object from the static build"
"$build/bin/mxfp4-dump" --arch=sm_90a --n=1536 --k=768 --bm=8 --emit=isa -o "$tmp/k.ptx"
grep -q "wgmma.mma_async.sync.aligned.m64n8k16" "$tmp/k.ptx" || fail "no PTX from the static build"
echo "check-static: OK ($exported mxfp4:: symbols exported; ldd: $(ldd "$build/bin/mxfp4-dump" | awk '{print $1}' | tr '\n' ' '))"
