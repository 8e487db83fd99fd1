//===- AmdLowering.h - State shared by the mxtile -> AMDGPU lowering -*- C++ -*-===//
//
// The lowering walks a tile kernel once, in order, and emits per-lane code
// into a gpu.func. Tile values do not become SSA values one-to-one: a load is
// remembered until its consumer (quantize) decides the lane mapping, a
// quantized tile (quantize, or load_mx of pre-quantized rows) lives in LDS, weights and scales are
// fetched where the MMA needs them, and an accumulator tile is a list of per-lane vectors. The
// TileHandle variant records which of these a tile value became.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDLOWERING_H
#define MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDLOWERING_H

#include "AmdChip.h"
#include "mxfp4/Conversion/LaneLayout.h"
#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"

#include <variant>

namespace mxfp4::amd {

/// Words of padding after each row the fused epilogue stages in LDS.
inline constexpr int64_t kActMxRowPadWords = 4;

/// A chip and the tile shape of the kernel being lowered.
struct Config {
  /// The chip's name (diagnostics), its data and what it does its own way.
  std::string chip;
  const TargetInfo *target = nullptr;
  const AmdChip *hw = nullptr;
  int wave = 64;
  int waves = 4;
  int64_t bm = 0, bn = 0, bk = 0;
  /// The kernel ends in mxtile.store_act_mx, which stages its activations
  /// in an LDS buffer of its own.
  bool actMx = false;

  MmaIntrinsic mma() const { return hw->mma(); }
  int threads() const { return wave * waves; }
  int64_t rowTiles() const { return bm / 16; }         ///< MMA tiles along M
  int64_t colTiles() const { return bn / waves / 16; } ///< MMA tiles along N per wave
  int64_t subSteps() const { return bk / 128; }        ///< 128-K MMA steps per K tile
  int64_t blocksPerRow() const { return bk / 32; }     ///< 32-element blocks per tile row
  int accPerLane() const { return mmaShape(mma()).accPerLane; }
  /// bf16 elements one thread quantizes per pass (32 / this = lanes per block).
  int64_t elemsPerThread() const { return hw->elemsPerThread(bm, bk); }
  int64_t quantPasses() const { return bm * bk / (threads() * elemsPerThread()); }
  /// Bytes of A scales per LDS stage.
  int64_t aScaleBytes() const { return hw->aScaleBytes(bm, bk); }
  int64_t aDataBytes() const { return bm * bk / 2; }
  /// f32 words of a row of the fused epilogue's staged activations, and
  /// the buffer's bytes (0 without that epilogue).
  int64_t actMxRowWords() const;
  int64_t actMxBytes() const { return actMx ? bm * actMxRowWords() * 4 : 0; }
};

/// A BF16/F32 tile load whose lane mapping is not chosen yet.
struct PendingLoad {
  tile::LoadOp op;
};
/// Quantized A data and scales in LDS, double-buffered by K-step parity.
struct LdsData {};
struct LdsScales {};
/// A weight or scale fetch, done lane by lane at the MMA.
struct PendingWeight {
  tile::LoadWeightOp op;
};
struct PendingScales {
  tile::LoadScalesOp op;
};
/// An accumulator: rowTiles x colTiles per-lane vectors, row-major.
struct Accumulator {
  llvm::SmallVector<mlir::Value> parts;
};

using TileHandle = std::variant<PendingLoad, LdsData, LdsScales, PendingWeight, PendingScales,
                                Accumulator>;

/// Emits the per-lane code of one kernel.
class KernelEmitter {
public:
  /// `ldsE`: the fused epilogue's f32 staging buffer, if it has one.
  KernelEmitter(const Config &config, mlir::gpu::GPUFuncOp func, mlir::Value ldsA, mlir::Value ldsS,
                mlir::Value ldsE)
      : cfg(config), func(func), ldsA(ldsA), ldsS(ldsS), ldsE(ldsE) {}

  /// Lowers `op` (a kernel-body op) at the builder's insertion point.
  mlir::LogicalResult lower(mlir::ImplicitLocOpBuilder &b, mlir::Operation *op);

  /// Thread/lane/wave ids and other loop-invariant values; call once first.
  void emitPrologue(mlir::ImplicitLocOpBuilder &b);

  mlir::IRMapping mapping;

private:
  mlir::LogicalResult lowerFor(mlir::ImplicitLocOpBuilder &b, mlir::scf::ForOp op);
  mlir::LogicalResult lowerGroupBlock(mlir::ImplicitLocOpBuilder &b, tile::GroupBlockOp op);
  mlir::LogicalResult lowerQuantize(mlir::ImplicitLocOpBuilder &b, tile::QuantizeOp op);
  mlir::LogicalResult lowerLoadMx(mlir::ImplicitLocOpBuilder &b, tile::LoadMxOp op);
  mlir::LogicalResult lowerScaledMma(mlir::ImplicitLocOpBuilder &b, tile::ScaledMmaOp op);
  mlir::LogicalResult lowerActivation(mlir::ImplicitLocOpBuilder &b, tile::ActivationOp op);
  mlir::LogicalResult lowerStore(mlir::ImplicitLocOpBuilder &b, tile::StoreOp op);
  /// A split-K partial tile, summed by the tile's last split (AmdStoreSplitK.cpp).
  mlir::LogicalResult lowerStoreSplitK(mlir::ImplicitLocOpBuilder &b, tile::StoreOp op,
                                       const Accumulator &acc);
  /// Calls `body` for each element of `acc` that lies inside the output
  /// (tile row < `valid`, and column < `ld` where `nTail`), inside a branch
  /// on that, with its value converted to `elem`, its tile row and its
  /// column (from `col0`).
  void forEachStoredElement(
      mlir::ImplicitLocOpBuilder &b, const Accumulator &acc, mlir::Type elem, mlir::Value col0,
      mlir::Value ld, mlir::Value valid, bool nTail,
      llvm::function_ref<void(mlir::Value v, mlir::Value rowIn, mlir::Value col)> body);
  /// MoE stage 1's fused epilogue (AmdStoreActMx.cpp).
  mlir::LogicalResult lowerStoreActMx(mlir::ImplicitLocOpBuilder &b, tile::StoreActMxOp op);
  /// MoE stage 2's atomic epilogue (AmdStoreScatterAdd.cpp).
  mlir::LogicalResult lowerStoreScatterAdd(mlir::ImplicitLocOpBuilder &b,
                                           tile::StoreScatterAddOp op);

  template <typename T> T *handle(mlir::Value v) {
    auto it = tiles.find(v);
    return it == tiles.end() ? nullptr : std::get_if<T>(&it->second);
  }


  const Config &cfg;
  mlir::gpu::GPUFuncOp func;
  mlir::Value ldsA, ldsS, ldsE;
  llvm::DenseMap<mlir::Value, TileHandle> tiles;

  // Prologue values.
  mlir::Value tid, lane, wave, l16, lgroup;
  // The K loop being lowered: its trip index and LDS stage offset.
  mlir::Value stageA, stageS;
  // A grouped GEMM's guard (mxtile.group_block): the rest of the kernel
  // runs inside it, the return goes after it.
  mlir::scf::IfOp groupGuard;
};

} // namespace mxfp4::amd

#endif // MXFP4_LIB_CONVERSION_TILETOAMDGPU_AMDLOWERING_H
