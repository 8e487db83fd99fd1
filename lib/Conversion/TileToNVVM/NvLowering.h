//===- NvLowering.h - State of the mxtile -> NVVM (sm_90a) lowering -*- C++ -*-===//
//
// Hopper has no FP4 tensor cores, so the exact path dequantizes: weights
// E2M1 -> BF16 in registers with the E8M0 scale folded in, activations
// quantized inline to MXFP4 (bit for bit the CPU quantizer) and dequantized
// to BF16 in shared memory, then mma.sync m16n8k16 BF16 with FP32
// accumulators. A and B are swapped: weight rows are the MMA M dimension,
// the few tokens of a decode step the N dimension.
//
// CTA: 4 warps; warp w owns weight rows n0 + 32w .. +31 (two m16 tiles), the
// CTA owns BM tokens (BM/8 n8 tiles). Inside each 128-K chunk MMA step s and
// thread t = lane%4 use k = 32t + 4s + {0,1} and 32t + 4s + {2,3}: the same
// permutation on both operands, so each thread's weight bytes for a row are
// 16 contiguous bytes and one E8M0 scale (the sm90-mma16 layouts).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H
#define MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"

namespace mxfp4::nv {

struct Config {
  int64_t bm = 16, bn = 128, bk = 128;
  int64_t k = 0; ///< full K of the weights
  /// K steps of weights kept ahead in registers. Split-K loops are short and
  /// their clamped tail would re-load the extra steps, so they keep one;
  /// full-K loops keep two (measured on the H200: docs/Performance.md).
  int weightDepth = 2;
  static constexpr int kThreads = 128;

  int64_t chunksPerRow() const { return k / 128; } ///< 128-K chunks of a weight row
  int64_t chunksPerStep() const { return bk / 128; }
  int64_t tokenTiles() const { return bm / 8; }
  int64_t unitsPerBuffer() const { return bm * bk / 8; } ///< 16-byte smem units
  int64_t quantChunks() const { return bm * bk / (8 * kThreads); }
};

/// Weight registers of one K step: words[kc][i][h] (vector<4xi32>) and one
/// scale word per chunk (i32).
struct WeightRegs {
  llvm::SmallVector<mlir::Value> words;
  llvm::SmallVector<mlir::Value> scales;
};

class Sm90Emitter {
public:
  Sm90Emitter(const Config &cfg, mlir::Value smem) : cfg(cfg), smem(smem) {}

  void emitIds(mlir::ImplicitLocOpBuilder &b);
  /// Lowers one op of the kernel body.
  mlir::LogicalResult lower(mlir::ImplicitLocOpBuilder &b, mlir::Operation *op);

  mlir::IRMapping mapping;

private:
  mlir::LogicalResult lowerKLoop(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp loop);
  mlir::LogicalResult lowerStore(mlir::ImplicitLocOpBuilder &b, tile::StoreOp op);

  // Sm90Quantize.cpp
  /// The activation chunks of one step starting at K element `col`.
  llvm::SmallVector<mlir::Value> loadActivations(mlir::ImplicitLocOpBuilder &b, tile::LoadOp op,
                                                 mlir::Value col);
  /// Quantizes, dequantizes and stores `chunks` (from loadActivations at `col`)
  /// into shared memory at unit offset `buffer`; writes the dump if asked.
  void quantizeToSmem(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                      llvm::ArrayRef<mlir::Value> chunks, mlir::Value col, mlir::Value buffer);
  /// Per-thread coordinates of quantizer chunk r: token row, 16-byte unit of
  /// K inside the step (col8), and the 4-lane group position.
  struct QuantCoords {
    mlir::Value row, col8, t, p, kc;
  };
  QuantCoords quantCoords(mlir::ImplicitLocOpBuilder &b, int64_t r);

  // Sm90Mma.cpp
  /// Weights at K element `kcol` and scales at K-block `kblock` for one step.
  WeightRegs loadWeights(mlir::ImplicitLocOpBuilder &b, tile::LoadWeightOp w,
                         tile::LoadScalesOp s, mlir::Value kcol, mlir::Value kblock);
  void mmaStep(mlir::ImplicitLocOpBuilder &b, const WeightRegs &regs, mlir::Value buffer,
               llvm::MutableArrayRef<mlir::Value> accs);

  /// `v` as it will be when the loop's induction variable is `iv`: values
  /// computed in the loop body from the induction variable are re-emitted.
  mlir::Value valueAt(mlir::ImplicitLocOpBuilder &b, mlir::Value v, mlir::scf::ForOp loop,
                      mlir::Value iv);


  const Config &cfg;
  mlir::Value smem;
  /// Accumulator tiles: 2 x tokenTiles() vector<4xf32>, [i][j] row-major.
  llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Value>> accumulators;
  mlir::Value tid, lane, warp, g, t;
};

} // namespace mxfp4::nv

#endif // MXFP4_LIB_CONVERSION_TILETONVVM_NVLOWERING_H
