//===- main.cpp - Example 1: JIT a dense A4W4 GEMM and run it --------------===//
//
// The README's main job, and the smallest complete embedding of mxfp4-jit:
//  1. JIT-compile the dense A4W4 GEMM for gfx950, gfx1250 and sm_90a through
//     the same Jit an engine uses (memory table, disk cache, in-process
//     compile) and print what was built;
//  2. if a GPU is present, prepare random MXFP4 weights, run
//     mxfp4::gemmA4W4 on random BF16 activations, and check the result
//     against the float64 CPU reference (the QDQ path), printing the error
//     and the kernel time.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace mxfp4;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "dense-gemm: %s\n", msg.c_str());
  return 1;
}

int main() {
  const int64_t n = 8448, k = 7168;
  Jit &jit = Jit::global();
  std::printf("mxfp4-jit: cache %s\n",
              jit.options().disableDisk ? "disabled" : jit.options().cacheDir.c_str());
  std::printf("%-8s %-100s %9s %10s %s\n", "target", "kernel", "bytes", "compile", "from");
  // The kernels gemmA4W4 runs for these weights (every scale below 128)
  // at decode, this job's and a prefill M: dispatch's own plan, so a
  // process that only serves from the cache finds every one.
  for (Arch arch : {Arch::GFX950, Arch::GFX1250, Arch::SM90A})
    for (int64_t m : {1, 16, 256}) {
      auto plan = planGemmA4W4({arch, n, k, /*scalesBelow128=*/true}, m);
      if (!plan)
        return fail(plan.takeError().message());
      for (const KernelSpec &spec : plan->kernels()) {
        Jit::Source src;
        auto kernel = jit.get(spec, &src);
        if (!kernel)
          return fail(kernel.takeError().message());
        const char *from = src == Jit::Source::Compiled ? "compiled"
                           : src == Jit::Source::Disk   ? "disk cache"
                                                        : "memory";
        std::printf("%-8s %-100s %9zu %7.1f ms %s (%s)\n", toString(arch).data(),
                    spec.name().c_str(), (*kernel)->binary.size(), (*kernel)->compileMs(), from,
                    toString((*kernel)->format).data());
      }
    }

  auto devOr = Device::open();
  if (!devOr) {
    std::printf("no GPU: %s\n", devOr.takeError().message().c_str());
    return 0;
  }
  Device &dev = **devOr;
  const int64_t m = 16;
  std::mt19937_64 rng(2026);
  std::vector<uint8_t> wq(size_t(n * k / 2)), ws(size_t(n * k / 32));
  for (auto &b : wq)
    b = uint8_t(rng());
  for (auto &s : ws) // 2^-11 .. 2^-1, as in real checkpoints
    s = uint8_t(116 + rng() % 11);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> a(size_t(m * k));
  for (auto &x : a)
    x = floatToBf16(normal(rng));
  auto w = prepareGemmA4W4Weight(dev, wq, ws, n, k);
  if (!w)
    return fail(w.takeError().message());
  auto da = dev.alloc(a.size() * 2), dc = dev.alloc(size_t(m * n * 2));
  if (!da || !dc)
    return fail("device allocation failed");
  if (Error e = dev.copyToDevice(*da, a.data(), a.size() * 2))
    return fail(e.message());
  if (Error e = gemmA4W4(dev, nullptr, *da, m, **w, *dc)) // JIT + warm-up
    return fail(e.message());
  // The median of 15 calls, each after a 512 MiB memset that flushes the
  // L2 (and hides the host's launch work behind it), as mxfp4-bench times.
  const size_t flushBytes = size_t(512) << 20;
  auto flush = dev.alloc(flushBytes);
  if (!flush)
    return fail(flush.takeError().message());
  std::vector<double> times;
  for (int r = 0; r < 15; ++r) {
    if (Error e = dev.fill(*flush, uint8_t(r), flushBytes))
      return fail(e.message());
    auto t = dev.time([&] { return gemmA4W4(dev, nullptr, *da, m, **w, *dc); });
    if (!t)
      return fail(t.takeError().message());
    times.push_back(*t);
  }
  dev.free(*flush);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  const double ms = times[times.size() / 2];
  std::vector<uint16_t> c(size_t(m * n));
  if (Error e = dev.copyToHost(c.data(), *dc, c.size() * 2))
    return fail(e.message());
  MxMatrix wm;
  wm.rows = n;
  wm.cols = k;
  wm.data = wq;
  wm.scales = ws;
  auto ref = referenceGemmQdq(a, m, k, wm);
  if (!ref)
    return fail(ref.takeError().message());
  std::vector<double> got(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    got[i] = bf16ToFloat(c[i]);
  ErrorStats s = compareToReference(got, ref->c, ref->absSum);
  bool ok =
      s.nonFinite == 0 && s.maxNormalized <= double(k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
  std::printf(
      "%s: gemmA4W4 M=%lld N=%lld K=%lld in %.1f us (median, L2 flushed); rel-L2 vs float64 "
      "QDQ reference %.2e, max |err|/sum|ab| %.2e -> %s\n",
      dev.name().c_str(), (long long)m, (long long)n, (long long)k, ms * 1000.0, s.relL2,
      s.maxNormalized, ok ? "PASS" : "FAIL");
  dev.free(*da);
  dev.free(*dc);
  return ok ? 0 : 1;
}
