//===- MxBlockEmitter.h - MoE activations and block quantization -*- C++ -*-===//
//
// Scalar IR shared by MoE stage 1's two epilogues, the moe_actq kernel and
// moe_gemm's fused one (mxtile.store_act_mx): the gated activations in f32
// with run-time parameters, and one 32-element block quantized to MXFP4
// bit for bit as the CPU quantizer does (Format/Quantize.h), and where
// its scale goes.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_MXBLOCKEMITTER_H
#define MXFP4_CONVERSION_MXBLOCKEMITTER_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4 {

/// The run-time parameters of a gated activation (mxtile.activation's):
/// swiglu p0 = alpha, p1 = limit; situv2 p0 = beta, p1 = linear_beta, r0
/// and r1 their reciprocals (SiTUv2 divides by its betas); all f32.
struct GatedParams {
  mlir::Value p0, p1, r0, r1;
};
/// The parameters with their reciprocals computed here.
GatedParams emitGatedParams(mlir::ImplicitLocOpBuilder &b, mlir::Value p0, mlir::Value p1);

/// act(g, u) in f32 (scalars). Quotients and exp are the target's
/// approximate instructions (a few ulp): the result feeds a 4-bit
/// quantizer.
mlir::Value emitGatedActivation(mlir::ImplicitLocOpBuilder &b, tile::ActivationKind kind,
                                mlir::Value g, mlir::Value u, const GatedParams &params);

/// 32 f32 values quantized as the CPU quantizer's quantizeBlock: their four
/// i32 code words (element 8w + e in nibble e of word w) and the i32 E8M0
/// scale.
std::pair<llvm::SmallVector<mlir::Value, 4>, mlir::Value>
emitQuantizeBlock(mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<mlir::Value> x,
                  tile::ScaleRoundingKind mode);

/// The byte offset of E8M0 scale (row, kb) of the MoE intermediates, rows
/// of `kBlocks` scales (index values), in the layout of `rep`
/// (KernelSpec::moeScaleRep; Format/Layout.h gfx1250MoeScaleOffset, whose
/// formula this emits): row * kBlocks + kb when `rep` is 1.
mlir::Value emitMoeScaleOffset(mlir::ImplicitLocOpBuilder &b, int64_t rep, mlir::Value kBlocks,
                               mlir::Value row, mlir::Value kb);

/// mxtile.store_act_mx's operands as its lowerings use them (mapped into
/// the kernel being emitted), with the activation's parameters.
struct ActMxOperands {
  tile::StoreActMxOp op;
  mlir::Value row0, col0, ld, cols, valid, scales;
  mlir::Value debug; ///< null without the debug output
  GatedParams params;
  /// The routing weight of tile row `row`: rowWeights[row0 + min(row,
  /// lastRow)] when doweight, else 1 (rows past `lastRow`, the tile's last
  /// valid row, read it in bounds and are never stored).
  mlir::Value rowWeight(mlir::ImplicitLocOpBuilder &b, mlir::Value row, mlir::Value lastRow) const;

  mlir::Value rowWeights, useWeights, one;
};
ActMxOperands mapActMxOperands(mlir::ImplicitLocOpBuilder &b, tile::StoreActMxOp op,
                               const mlir::IRMapping &mapping);

/// One (row, 32-column block) unit of the op once its 32 f32 activations
/// `x` are gathered: `row` is the output row and `column` the block's
/// first intermediate column (index values). The block quantized, or zero
/// codes and scale 1.0 (what moe_actq writes) when it is padding (`column`
/// at or past the op's cols); its scale byte stored in the op's layout
/// and, with the debug output, the activations of a real block. Returns
/// the codes as vector<4xi32>, which the target stores at byte (row ld +
/// column) / 2.
mlir::Value emitActMxUnit(mlir::ImplicitLocOpBuilder &b, const ActMxOperands &ops,
                          llvm::ArrayRef<mlir::Value> x, mlir::Value row, mlir::Value column);

} // namespace mxfp4

#endif // MXFP4_CONVERSION_MXBLOCKEMITTER_H
