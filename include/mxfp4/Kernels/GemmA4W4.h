//===- GemmA4W4.h - The dense A4W4 GEMM tile program -------------*- C++ -*-===//
//
// C[M, N] (bf16) = quantize_mxfp4(A[M, K] bf16) * W[N, K]^T, W packed E2M1
// with E8M0 scales in the target's preshuffled layouts (seed 000). N and K
// are compile-time constants; M is a run-time argument with masked tails.
// Kernel arguments, in order: A (bf16), W (i8), W scales (i8), C (bf16), M (i32).
// Grid: x = N / BN tiles, y = ceil(M / BM) tiles.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_GEMMA4W4_H
#define MXFP4_KERNELS_GEMMA4W4_H

#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Format/Layout.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mxfp4 {

/// The GPU targets.
enum class Arch : uint8_t { GFX950, GFX1250, SM90A };

llvm::StringRef toString(Arch arch);
std::optional<Arch> parseArch(llvm::StringRef name);

/// Everything that changes the generated dense A4W4 kernel.
struct GemmA4W4Spec {
  Arch arch = Arch::GFX950;
  int64_t n = 0, k = 0;
  int64_t bm = 16, bn = 256, bk = 256;
  ScaleRounding rounding = kDefaultScaleRounding;

  WeightLayout weightLayout() const { return WeightLayout::Gfx950Mfma16; }
  ScaleLayout scaleLayout() const {
    return arch == Arch::GFX1250 ? ScaleLayout::Gfx1250Wmma : ScaleLayout::Gfx950Mfma16;
  }
  /// `gemm_a4w4_<arch>_n<N>_k<K>_bm<BM>_bn<BN>_bk<BK>_<rounding>`.
  std::string name() const;
};

/// Checks (n, k, bm) for `arch` and fills the derived tile: BN 256, BK 256 when
/// K % 256 == 0 else 128. Errors name the violated constraint.
llvm::Expected<GemmA4W4Spec> makeGemmA4W4Spec(Arch arch, int64_t n, int64_t k, int64_t bm,
                                              ScaleRounding rounding = kDefaultScaleRounding);

/// Appends the kernel's tile program (a func.func marked mxtile.kernel) to `module`.
void buildGemmA4W4(mlir::ModuleOp module, const GemmA4W4Spec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_GEMMA4W4_H
