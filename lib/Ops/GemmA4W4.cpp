//===- GemmA4W4.cpp - The public dense A4W4 GEMM API ----------------------===//

#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Format/Layout.h"
#include "mxfp4/JIT/Jit.h"

#include <cstdint>
#include <tuple>
#include <vector>

namespace mxfp4 {

PreparedWeight::~PreparedWeight() {
  dev->free(data);
  dev->free(scales);
  dev->free(workspace);
  dev->free(counters);
}

Expected<std::pair<void *, void *>> PreparedWeight::splitKScratch() const {
  if (!workspace) {
    size_t wsBytes = size_t(kSplitKMaxRows * rows * 4);
    size_t counterBytes = size_t(kSplitKMaxRows * rows * 4); // >= one per output tile
    Expected<void *> w = dev->alloc(wsBytes);
    if (!w)
      return w.takeError();
    Expected<void *> c = dev->alloc(counterBytes);
    if (!c) {
      dev->free(*w);
      return c.takeError();
    }
    if (Error e = dev->fill(*w, 0, wsBytes))
      return e;
    if (Error e = dev->fill(*c, 0, counterBytes))
      return e;
    if (Error e = dev->synchronize())
      return e;
    workspace = *w;
    counters = *c;
  }
  return std::make_pair(workspace, counters);
}

template <typename... Parts> static Error fail(const Parts &...parts) {
  return makeError(parts...);
}

Expected<std::unique_ptr<PreparedWeight>> prepareGemmA4W4Weight(Device &dev, Span<uint8_t> wFp4,
                                                                Span<uint8_t> wScale, int64_t n,
                                                                int64_t k,
                                                                std::optional<Arch> archOpt) {
  Arch arch;
  if (archOpt) {
    arch = *archOpt;
  } else {
    Expected<Arch> a = targetArch(&dev);
    if (!a)
      return a.takeError();
    arch = *a;
  }
  // The shape constraints are the kernels'; any M tile will do for checking.
  Expected<KernelSpec> spec = makeGemmA4W4Spec(arch, n, k, arch == Arch::SM90A ? 8 : 16);
  if (!spec)
    return spec.takeError();
  if (wFp4.size() != size_t(n * k / 2))
    return fail("prepareGemmA4W4Weight: packed weights for N = ", n, ", K = ", k, " are ",
                n * k / 2, " bytes, got ", wFp4.size());
  if (wScale.size() != size_t(n * k / 32))
    return fail("prepareGemmA4W4Weight: weight scales for N = ", n, ", K = ", k, " are ",
                n * k / 32, " bytes, got ", wScale.size());
  Expected<std::vector<uint8_t>> w = shuffleWeight(spec->weightLayout, wFp4, n, k / 2);
  if (!w)
    return w.takeError();
  Expected<std::vector<uint8_t>> s = shuffleScales(spec->scaleLayout, wScale, n, k / 32);
  if (!s)
    return s.takeError();
  Expected<void *> dw = dev.alloc(w->size());
  if (!dw)
    return dw.takeError();
  Expected<void *> ds = dev.alloc(s->size());
  if (!ds) {
    dev.free(*dw);
    return ds.takeError();
  }
  auto prepared = std::make_unique<PreparedWeight>(dev, arch, n, k, *dw, *ds);
  if (Error e = dev.copyToDevice(*dw, w->data(), w->size()))
    return e;
  if (Error e = dev.copyToDevice(*ds, s->data(), s->size()))
    return e;
  return prepared;
}

GemmA4W4Tile selectGemmA4W4Tile(Arch arch, int64_t n, int64_t k, int64_t m) {
  if (arch == Arch::SM90A) {
    // Measured on the H200 (docs/Performance.md, 2026-11-30 sweep): small
    // tiles and split-K while the output tiles leave SMs idle; BM 32 up to
    // M = 256 (BM 64 costs twice the registers for no gain there).
    GemmA4W4Tile t;
    t.bm = m <= 8 ? 8 : m <= 32 ? 16 : m <= 256 ? 32 : 64;
    const int64_t sms = 132;
    int64_t tiles = (n / 128) * ((m + t.bm - 1) / t.bm), steps = k / 128;
    bool shortK = k < 2048; // the atomic reduction only pays off when K is long
    if (m <= PreparedWeight::kSplitKMaxRows && tiles <= sms && !(shortK && tiles >= sms / 2)) {
      int64_t want = (4 * sms + tiles - 1) / tiles; // ~4 workgroups per SM
      for (int64_t s = std::min<int64_t>({want, steps / 2, 16}); s > 1; --s)
        if (steps % s == 0) {
          t.splitK = s;
          break;
        }
    }
    return t;
  }
  // gfx950/gfx1250: BM64 from the M where seed 000 measured it faster.
  int64_t threshold = 512;
  if (n == 8448 && k == 7168)
    threshold = 128;
  else if (n == 1536 && k == 7168)
    threshold = 2048;
  return {m >= threshold ? 64 : 16, 1};
}

Error gemmA4W4(Device &dev, void *stream, const void *a, int64_t m, const PreparedWeight &w,
               void *out, const GemmA4W4Options &options) {
  if (m < 1)
    return fail("gemmA4W4: M must be >= 1, got ", m);
  if (!a || !out)
    return fail("gemmA4W4: the activation and output pointers must not be null");
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0)
    return fail("gemmA4W4: the activation pointer must be 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(out) % 2 != 0)
    return fail("gemmA4W4: the output pointer must be 2-byte aligned");
  if (&w.device() != &dev)
    return fail("gemmA4W4: the weights were prepared for another device");
  // Kernels index with 32 bits; the activation buffer is addressed in 16-byte units.
  if (m * w.n() >= (int64_t(1) << 31) || m * w.k() / 8 >= (int64_t(1) << 27))
    return fail("gemmA4W4: M = ", m,
                " is too large for 32-bit indexing (M * N "
                "must be < 2^31 and M * K < 2^30)");
  bool dump = options.dumpCodes || options.dumpScales;
  if (dump && !(options.dumpCodes && options.dumpScales))
    return fail("gemmA4W4: the quantization dump needs both dumpCodes and dumpScales");
  GemmA4W4Tile tile = selectGemmA4W4Tile(w.arch(), w.n(), w.k(), m);
  if (options.bm)
    tile.bm = *options.bm;
  if (options.splitK)
    tile.splitK = *options.splitK;
  if (options.bk)
    tile.bk = *options.bk;
  Expected<KernelSpec> spec = makeGemmA4W4Spec(w.arch(), w.n(), w.k(), tile.bm, options.rounding);
  if (!spec)
    return spec.takeError();
  spec->splitK = tile.splitK;
  if (tile.bk)
    spec->bk = tile.bk;
  if (dump)
    spec->epilogue = Epilogue::BF16DumpQuant;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  void *ws = nullptr, *counters = nullptr;
  if (spec->splitK > 1) {
    if (m > PreparedWeight::kSplitKMaxRows)
      return fail("gemmA4W4: split-K is for M <= ", PreparedWeight::kSplitKMaxRows,
                  ", got M = ", m);
    Expected<std::pair<void *, void *>> scratch = w.splitKScratch();
    if (!scratch)
      return scratch.takeError();
    std::tie(ws, counters) = *scratch;
  }
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(*spec);
  if (!kernel)
    return kernel.takeError();
  void *aPtr = const_cast<void *>(a), *wPtr = w.deviceData(), *sPtr = w.deviceScales();
  int32_t m32 = int32_t(m);
  // Arguments in the kernel's order (GemmA4W4.h): the optional ones follow M.
  std::vector<void *> args = {&aPtr, &wPtr, &sPtr, &out, &m32};
  void *dumpCodes = options.dumpCodes, *dumpScales = options.dumpScales;
  if (dump) {
    args.push_back(&dumpCodes);
    args.push_back(&dumpScales);
  }
  if (spec->splitK > 1) {
    args.push_back(&ws);
    args.push_back(&counters);
  }
  return dev.launch(**kernel, (*kernel)->geometry(m), args.data(), stream);
}

} // namespace mxfp4
