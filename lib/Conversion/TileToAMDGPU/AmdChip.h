//===- AmdChip.h - What differs between the AMD chips ------------*- C++ -*-===//
//
// The AMD lowering (TileToAMDGPU.cpp, AmdQuantize.cpp, AmdMma.cpp) is one
// walk of the tile program for every chip. What a chip does its own way
// sits behind AmdChip, one implementation per chip: Gfx950Chip.cpp (wave64,
// v_mfma_scale 16x16x128 with opsel-picked scale bytes, pairwise FP4
// packing) and Gfx1250Chip.cpp (wave32, v_wmma_scale 16x16x128 with a row's
// four scales, 8-wide FP4 packing). The chip's data (wave size, LDS, MMA
// shape) is its TargetInfo row (Kernels/TargetInfo.h).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDCHIP_H
#define MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDCHIP_H

#include "mxfp4/Conversion/LaneLayout.h"
#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Kernels/TargetInfo.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4::amd {

struct Config;

/// What one 128-K step of the scaled MMA reads, for AmdChip::emitMma.
struct MmaOperands {
  /// Lane ids: the lane in its wave, its row l % 16 and group l / 16.
  mlir::Value lane, l16, lgroup;
  /// This wave's first output column, and the first global 128-K step.
  mlir::Value waveColumn, firstStep;
  /// A's codes and scales in LDS at the current stage.
  mlir::Value ldsA, ldsS, stageA, stageS;
  /// B's codes and scales in global memory, their K block (load_scales'
  /// kblock) and the bytes of a 32-row scale group of their layout.
  mlir::Value weights, scales, scaleBlock;
  int64_t packedK = 0, scaleGroupBytes = 0;
};

class AmdChip {
public:
  virtual ~AmdChip() = default;
  /// The scaled MMA and the scale layout it reads B's scales in.
  virtual MmaIntrinsic mma() const = 0;
  virtual tile::ScaleLayoutKind scaleLayout() const = 0;
  /// BF16 elements one thread quantizes per pass (32 / this = lanes a block).
  virtual int64_t elemsPerThread(int64_t bm, int64_t bk) const = 0;
  /// Bytes of A scales in one LDS stage.
  virtual int64_t aScaleBytes(int64_t bm, int64_t bk) const = 0;
  /// Packs the 8 BF16 elements 8 * dw .. 8 * dw + 7 of `x` into one i32 of
  /// E2M1 codes, each divided by `scale` (f32) with RNE and saturation.
  virtual mlir::Value packFp4(mlir::ImplicitLocOpBuilder &b, mlir::Value x, int64_t dw,
                              mlir::Value scale) const = 0;
  /// Where row `r`, K block `kb` of a stage's A go in LDS: the byte column
  /// of the block's packed codes in the row, and the byte of its scale.
  virtual std::pair<mlir::Value, mlir::Value> ldsPlacement(mlir::ImplicitLocOpBuilder &b,
                                                           const Config &cfg, mlir::Value r,
                                                           mlir::Value kb) const = 0;
  /// The MMAs of one K tile (all its 128-K steps), accumulating into
  /// `parts` (rowTiles x colTiles per-lane vectors, row-major).
  virtual void emitMma(mlir::ImplicitLocOpBuilder &b, const Config &cfg, const MmaOperands &ops,
                       llvm::SmallVectorImpl<mlir::Value> &parts) const = 0;
};

/// The chip of an AMD target; null for any other.
const AmdChip *amdChip(Arch arch);

/// Shared by the chips: a dword of four E8M0 scales from `mem` at byte `offset`.
mlir::Value loadScaleDword(mlir::ImplicitLocOpBuilder &b, mlir::Value mem, mlir::Value offset);

} // namespace mxfp4::amd

#endif // MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDCHIP_H
