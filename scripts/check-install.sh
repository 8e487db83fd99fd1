#!/usr/bin/env bash
# Checks the package: installs the static-LLVM build (libmxfp4jit.so, the
# tools built there) and the runtime-only build (libmxfp4jit-rt.so) into one
# prefix, then builds an out-of-tree consumer (test/install/consumer) with
# find_package(mxfp4jit CONFIG REQUIRED) and runs it: the compiler library
# from C (with Debian's libLLVM in the same process) and C++, then the
# runtime library serving from the cache the compiler filled; and compiles
# the C consumer again through pkg-config. Run after check-static.sh and
# check-runtime-only.sh, which build both trees.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
static=${STATIC_BUILD_DIR:-$root/build-static}
rt=${RUNTIME_BUILD_DIR:-$root/build-runtime}
fail() { echo "check-install: $*" >&2; exit 1; }
ninja -C "$static" mxfp4jit mxfp4-dump
ninja -C "$rt" mxfp4jit-rt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$static" --prefix "$prefix" > /dev/null
cmake --install "$rt" --prefix "$prefix" > /dev/null
for f in include/mxfp4/mxfp4.h include/mxfp4/Ops/GemmA4W4.h lib/libmxfp4jit.so \
         lib/libmxfp4jit-rt.so lib/cmake/mxfp4jit/mxfp4jitConfig.cmake \
         lib/cmake/mxfp4jit/mxfp4jitTargets.cmake lib/cmake/mxfp4jit/mxfp4jitRuntimeTargets.cmake \
         lib/pkgconfig/mxfp4jit.pc lib/pkgconfig/mxfp4jit-rt.pc bin/mxfp4-dump; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
# No header that needs LLVM: the headers compile with no LLVM around.
if grep -rlq '#include "\(llvm\|mlir\|lld\)/' "$prefix/include"; then
  fail "installed headers include LLVM: $(grep -rl '#include "\(llvm\|mlir\)/' "$prefix/include")"
fi
cmake -S "$root/test/install/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/configure.log" || fail "configure: $(cat "$tmp/configure.log")"
ninja -C "$tmp/consumer" > "$tmp/build.log" || fail "build: $(cat "$tmp/build.log")"
"$tmp/consumer/consumer-c" "$tmp/cache" | tee "$tmp/c.out"
grep -q "kernel compiled" "$tmp/c.out" || fail "the C consumer compiled nothing"
"$tmp/consumer/consumer-cpp" | tee "$tmp/cpp.out"
grep -q "gemm_" "$tmp/cpp.out" || fail "the C++ consumer planned no kernel"
MXFP4_CACHE_DIR="$tmp/cache" MXFP4_ASSERT_CACHE_HIT=1 "$tmp/consumer/consumer-rt" | tee "$tmp/rt.out"
grep -q "from the cache" "$tmp/rt.out" || fail "the runtime consumer did not serve from the cache"
# pkg-config, as a Makefile would.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
cc -std=c99 -o "$tmp/consumer-pc" "$root/test/install/consumer/consumer.c" \
  $(pkg-config --cflags --libs mxfp4jit) -Wl,-rpath,"$prefix/lib"
"$tmp/consumer-pc" "$tmp/cache" | grep -q "from the cache" || fail "the pkg-config build failed"
echo "check-install: OK (find_package and pkg-config consumers of $(ls "$prefix/lib" | tr '\n' ' '))"
