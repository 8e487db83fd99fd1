//===- Sm90StoreActMx.cpp - MoE stage 1's fused epilogue on sm_90a --------===//
//
// mxtile.store_act_mx: the tile's columns pair gate and up rows in groups
// of 16 (8 gate, then the same 8 intermediate columns' up rows), which is
// how the accumulator fragments pair them too (NvLowering.h: acc[i][j]
// holds weight rows g and g + 8 of 16-row tile i), so each thread holds
// both operands of its activations: tile i, lane group g gives
// intermediate column 8 (warp's first tile + i) + g, for the thread's
// tokens 2t, 2t + 1 of each 8-token tile j.
//
// A 32-column MXFP4 block spans 4 tiles of 8 lanes, possibly of several
// warps, so the activations pass through shared memory (f32, [BM, BN/2]
// with rows padded by 4 words: the 4 token pairs of a warp's stores land
// on distinct banks); after a barrier each thread quantizes whole
// (token, block) units with the CPU quantizer's integer compares
// (Conversion/MxBlockEmitter.h) and stores 16 bytes of codes and a scale.
// Split-K tiles are summed first (Sm90Store.cpp), by the last split.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/MxBlockEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

namespace {

/// Words of padding after each staged row of activations.
constexpr int64_t kRowPadWords = 4;

} // namespace

LogicalResult Sm90Emitter::lowerStoreActMx(ImplicitLocOpBuilder &b, tile::StoreActMxOp op) {
  auto acc = accumulators.find(op.getValue());
  if (acc == accumulators.end())
    return op.emitOpError() << "on sm_90a only accumulator tiles can be stored";
  if (cfg.tileLoop() || cfg.streamsImage() || cfg.warpSplitK || cfg.decodeSteps)
    return op.emitOpError() << "the fused activation epilogue takes one tile per workgroup "
                               "from the plain K loop (no persistent grid, stream-K, "
                               "streamed image, warp-split or decode variant)";
  const int64_t half = cfg.bn / 2, rowWords = half + kRowPadWords;
  if (cfg.bm * rowWords * 4 > cfg.shared().barriersOffset())
    return op.emitOpError() << "the staged activations (" << cfg.bm * rowWords * 4
                            << " bytes) do not fit the workgroup's shared memory";

  auto finish = [&](ArrayRef<Value> tiles) -> LogicalResult {
    FloatType f32 = b.getF32Type();
    const ActMxOperands ops = mapActMxOperands(b, op, mapping);
    // The K loop's buffers are free once every warpgroup's wgmmas have
    // read them.
    barrier(b);
    Value lastRow = idxAdd(b, arith::MinUIOp::create(b, ops.valid, idxConst(b, cfg.bm)), -1);
    for (int64_t j = 0; j < cfg.tokenTiles(); ++j)
      for (int64_t tt = 0; tt < 2; ++tt) {
        Value token = idxAdd(b, idxMul(b, t, 2), j * 8 + tt);
        Value w = ops.rowWeight(b, token, lastRow);
        for (int64_t i = 0; i < cfg.tilesPerWarp(); ++i) {
          Value vec = tiles[i * cfg.tokenTiles() + j];
          Value gate = vector::ExtractOp::create(b, vec, ArrayRef<int64_t>{tt});
          Value up = vector::ExtractOp::create(b, vec, ArrayRef<int64_t>{2 + tt});
          Value a = emitGatedActivation(b, op.getKind(), arith::MulFOp::create(b, gate, w),
                                        arith::MulFOp::create(b, up, w), ops.params);
          Value column =
              idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, warp, cfg.tilesPerWarp()), i), 8), g);
          Value word = idxAdd(b, idxMul(b, token, rowWords), column);
          LLVM::StoreOp::create(b, a, sharedPtr(b, idxMul(b, word, 4)), /*alignment=*/4);
        }
      }
    barrier(b);
    // Unit u: token u / B, block u % B of the tile's B = BN / 64 blocks.
    const int64_t blocks = half / 32;
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    Value codes = LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getCodes()));
    Value rows = arith::MinUIOp::create(b, ops.valid, idxConst(b, cfg.bm));
    auto v4f32 = VectorType::get({4}, f32);
    auto i64 = b.getI64Type();
    for (int64_t u0 = 0; u0 < cfg.bm * blocks; u0 += cfg.threads()) {
      Value u = idxAdd(b, tid, u0);
      Value token = idxDiv(b, u, blocks), block = idxRem(b, u, blocks);
      auto ifOp = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, token, rows), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> x;
      Value first = idxAdd(b, idxMul(b, token, rowWords), idxMul(b, block, 32));
      for (int64_t q = 0; q < 8; ++q) {
        Value v =
            LLVM::LoadOp::create(b, v4f32, sharedPtr(b, idxMul(b, idxAdd(b, first, q * 4), 4)),
                                 /*alignment=*/16);
        for (int64_t e = 0; e < 4; ++e)
          x.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e}));
      }
      // The block's first intermediate column and the output row; the
      // codes at byte (row ld + column) / 2, 16-byte aligned (ld and column
      // are multiples of 32).
      Value column = idxAdd(b, idxDiv(b, ops.col0, 2), idxMul(b, block, 32));
      Value row = idxAdd(b, ops.row0, token);
      Value v = emitActMxUnit(b, ops, x, row, column);
      Value byte = arith::IndexCastUIOp::create(
          b, i64, idxDiv(b, idxAdd(b, idxMul(b, row, ops.ld), column), 2));
      Value at =
          LLVM::GEPOp::create(b, globalPtr, b.getI8Type(), codes, ArrayRef<LLVM::GEPArg>{byte});
      LLVM::StoreOp::create(b, v, at, /*alignment=*/16);
    }
    return success();
  };
  if (!op.getWorkspace())
    return finish(acc->second);
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  return sumSplitsThroughWorkspace(
      b, acc->second,
      LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getWorkspace())),
      mapping.lookup(op.getCounters()), op.getSplits(), finish);
}
