//===- GemmA4W4.cpp - The dense A4W4 GEMM tile program --------------------===//

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/DSL/TileBuilder.h"

#include "llvm/ADT/StringSwitch.h"

namespace mxfp4 {

llvm::StringRef toString(Arch arch) {
  switch (arch) {
  case Arch::GFX950:
    return "gfx950";
  case Arch::GFX1250:
    return "gfx1250";
  case Arch::SM90A:
    return "sm_90a";
  }
  return "invalid";
}

std::optional<Arch> parseArch(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Arch>>(name)
      .Case("gfx950", Arch::GFX950)
      .Case("gfx1250", Arch::GFX1250)
      .Case("sm_90a", Arch::SM90A)
      .Default(std::nullopt);
}

std::string GemmA4W4Spec::name() const {
  return ("gemm_a4w4_" + toString(arch) + "_n" + llvm::Twine(n) + "_k" + llvm::Twine(k) + "_bm" +
          llvm::Twine(bm) + "_bn" + llvm::Twine(bn) + "_bk" + llvm::Twine(bk) + "_" +
          toString(rounding))
      .str();
}

llvm::Expected<GemmA4W4Spec> makeGemmA4W4Spec(Arch arch, int64_t n, int64_t k, int64_t bm,
                                              ScaleRounding rounding) {
  GemmA4W4Spec s;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = bm;
  s.rounding = rounding;
  if (arch == Arch::SM90A)
    return llvm::createStringError("gemm_a4w4: the sm_90a lowering does not exist yet; "
                                   "use gfx950 or gfx1250");
  if (n <= 0 || k <= 0)
    return llvm::createStringError("gemm_a4w4: N and K must be positive, got N = %lld, K = %lld",
                                   (long long)n, (long long)k);
  if (n % s.bn != 0)
    return llvm::createStringError("gemm_a4w4 on %s needs N %% 256 == 0 (the N tile is 256); "
                                   "got N = %lld",
                                   toString(arch).data(), (long long)n);
  if (k % 128 != 0)
    return llvm::createStringError("gemm_a4w4 on %s needs K %% 128 == 0 (one scaled MMA covers "
                                   "128 K); got K = %lld",
                                   toString(arch).data(), (long long)k);
  if (bm != 16 && bm != 64)
    return llvm::createStringError("gemm_a4w4: BM must be 16 or 64, got %lld", (long long)bm);
  s.bk = k % 256 == 0 ? 256 : 128;
  return s;
}

void buildGemmA4W4(mlir::ModuleOp module, const GemmA4W4Spec &spec) {
  dsl::TileBuilder tb(module, spec.name());
  mlir::Value a = tb.bufferArg(tb.bf16());
  mlir::Value w = tb.bufferArg(tb.i8());
  mlir::Value ws = tb.bufferArg(tb.i8());
  mlir::Value c = tb.bufferArg(tb.bf16());
  dsl::Index m = tb.i32Arg();

  dsl::Index n0 = tb.tileId(0) * spec.bn;
  dsl::Index m0 = tb.tileId(1) * spec.bm;
  dsl::Index valid = m - m0; // rows of this tile that exist (M tail)
  dsl::Index kDim = tb.constant(spec.k), nDim = tb.constant(spec.n);

  dsl::Tile acc = tb.loopK(
      tb.constant(0), kDim, spec.bk, tb.zero(spec.bm, spec.bn), [&](dsl::Index k0, dsl::Tile acc) {
        dsl::Tile x = tb.load(a, m0, k0, kDim, valid, spec.bm, spec.bk);
        dsl::MxTile qa = tb.quantize(x, spec.rounding);
        dsl::MxTile qw = tb.loadWeight(w, ws, n0, k0, spec.k, spec.weightLayout(),
                                       spec.scaleLayout(), spec.bn, spec.bk);
        return tb.scaledMma(qa, qw, acc);
      });
  tb.store(acc, c, m0, n0, nDim, valid);
  tb.finish();
}

} // namespace mxfp4
