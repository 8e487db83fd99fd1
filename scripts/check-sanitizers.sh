#!/usr/bin/env bash
# Runs the host tests under sanitizers:
#  - ASan + UBSan: a full build (-O1) of the library, the tools and the unit
#    tests in $ASAN_BUILD_DIR (default build-asan); ctest runs every
#    GoogleTest and the lit suite there (GPU tests skip without a device).
#    Any report fails the run (UBSan does not recover; leaks are errors).
#    allow_user_poisoning=0: Debian's LLVM and lld are not instrumented, and
#    the BumpPtrAllocator poisoning an instrumented inline copy does on
#    their arenas would be reported as use-after-poison. use_sigaltstack=0:
#    LLVM's crash handling swaps in a signal stack of its own on the threads
#    that compile, which ASan would fail to unmap as its own at thread exit.
#  - TSan: the runtime-only build (clang, no LLVM to rebuild) of the JIT's
#    concurrency tests in $TSAN_BUILD_DIR (default build-tsan): threads and
#    several JITs racing on one disk cache.
# SANITIZERS=asan or tsan runs one of them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
asan=${ASAN_BUILD_DIR:-$root/build-asan}
tsan=${TSAN_BUILD_DIR:-$root/build-tsan}
which=${SANITIZERS:-asan,tsan}
start=$SECONDS

if [[ $which == *asan* ]]; then
  if [ ! -f "$asan/build.ninja" ]; then
    # -O1: sanitizer builds compile faster and report the same at -O1.
    cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DMXFP4_SANITIZE=address,undefined -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > /dev/null
  fi
  ninja -C "$asan"
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:allow_user_poisoning=0:use_sigaltstack=0 \
  UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$asan" --output-on-failure -j "$(nproc)" > "$asan/ctest.log" 2>&1 || {
      tail -80 "$asan/ctest.log" >&2
      echo "check-sanitizers: ASan/UBSan: tests failed (log: $asan/ctest.log)" >&2
      exit 1
    }
  asanSummary=$(grep -E "tests passed" "$asan/ctest.log")
fi

if [[ $which == *tsan* ]]; then
  cc=$(command -v clang-22 || command -v clang || true)
  cxx=$(command -v clang++-22 || command -v clang++ || true)
  [ -n "$cc" ] && [ -n "$cxx" ] || { echo "check-sanitizers: no clang for TSan" >&2; exit 1; }
  if [ ! -f "$tsan/build.ninja" ]; then
    CC=$cc CXX=$cxx cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMXFP4_RUNTIME_ONLY=ON -DMXFP4_RUNTIME_TESTS=ON -DMXFP4_SANITIZE=thread > /dev/null
  fi
  ninja -C "$tsan" mxfp4-jit-concurrency-tests
  # Repeated: a race shows only when the threads interleave so.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    "$tsan/bin/mxfp4-jit-concurrency-tests" --gtest_repeat=5 --gtest_brief=1 \
    > "$tsan/tsan.log" 2>&1 || {
      tail -80 "$tsan/tsan.log" >&2
      echo "check-sanitizers: TSan: the JIT concurrency tests failed (log: $tsan/tsan.log)" >&2
      exit 1
    }
  tsanSummary="$(grep -c '^\[  PASSED  \]' "$tsan/tsan.log") clean repetitions"
fi
echo "check-sanitizers: OK ($((SECONDS - start)) s; ASan+UBSan: ${asanSummary:-not run};" \
  "TSan: ${tsanSummary:-not run})"
