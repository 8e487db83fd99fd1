//===- Sm90StoreScatterAdd.cpp - MoE stage 2's atomic epilogue on sm_90a --===//
//
// mxtile.store_scatter_add: each valid row of the tile, a sorted row of one
// token's slot, is weighted and added to the token's f32 row. A thread's
// accumulator fragments hold two columns 8 apart of two rows (NvLowering.h),
// so the tile passes through shared memory first (f32, [BM, BN] with rows
// padded by 4 words: a warp's 32 stores of one fragment element land on
// distinct banks; in passes of fewer rows where BM rows do not fit the K
// loop's buffers); after a barrier each thread takes 4 contiguous columns
// of one row and adds them with one `red.global.v4.f32.add` (PTX ISA 8.1,
// sm_90): a 16-byte reduction in L2, no value returned. K splits add their
// partial tiles the same way, with no workspace; only the first adds the
// bias (the tile program says which).
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

namespace {

/// Words of padding after each staged row.
constexpr int64_t kRowPadWords = 4;

/// `red.global.v4.f32.add [at], {v}`: four f32 adds to global memory.
void redAddV4(ImplicitLocOpBuilder &b, Value at, ArrayRef<Value> v) {
  SmallVector<Value> operands{at};
  operands.append(v.begin(), v.end());
  LLVM::InlineAsmOp::create(b, TypeRange{}, operands,
                            b.getStringAttr("red.global.v4.f32.add [$0], {$1, $2, $3, $4};"),
                            b.getStringAttr("l,f,f,f,f,~{memory}"), b.getUnitAttr(), UnitAttr(),
                            LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
}

} // namespace

LogicalResult Sm90Emitter::lowerStoreScatterAdd(ImplicitLocOpBuilder &b,
                                                tile::StoreScatterAddOp op) {
  auto acc = accumulators.find(op.getValue());
  if (acc == accumulators.end())
    return op.emitOpError() << "on sm_90a only accumulator tiles can be stored";
  if (cfg.tileLoop() || cfg.streamsImage() || cfg.warpSplitK || cfg.decodeSteps)
    return op.emitOpError() << "the scatter epilogue takes one tile per workgroup from the "
                               "plain K loop (no persistent grid, stream-K, streamed image, "
                               "warp-split or decode variant)";
  // The rows staged at once: all of them where they fit the K loop's
  // buffers, else passes of fewer (a multiple of the 8-row token tiles).
  const int64_t rowWords = cfg.bn + kRowPadWords;
  const int64_t fit = cfg.shared().barriersOffset() / (rowWords * 4) / 8 * 8;
  if (fit < 8)
    return op.emitOpError() << "8 staged rows (" << 8 * rowWords * 4
                            << " bytes) do not fit the workgroup's shared memory";
  const int64_t passRows = std::min(cfg.bm, fit);
  FloatType f32 = b.getF32Type();
  Value row0 = mapping.lookup(op.getRow()), col0 = mapping.lookup(op.getCol()),
        ld = mapping.lookup(op.getLd()), valid = mapping.lookup(op.getValidRows()),
        tokens = mapping.lookup(op.getTokens());
  Value rowIds = mapping.lookup(op.getRowIds()), rowWeights = mapping.lookup(op.getRowWeights());
  Value zero32 = arith::ConstantIntOp::create(b, 0, 32);
  Value useWeights = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                           mapping.lookup(op.getUseWeights()), zero32);
  Value one = arith::ConstantFloatOp::create(b, f32, APFloat(1.0f));

  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value out = LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getOut()));
  Value bias = op.getBias() ? mapping.lookup(op.getBias()) : Value();
  Value biased = op.getBias() ? arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                                      mapping.lookup(op.getWithBias()), zero32)
                              : Value();
  Value rows = arith::MinUIOp::create(b, valid, idxConst(b, cfg.bm));
  auto v4f32 = VectorType::get({4}, f32);
  const int64_t units = cfg.bn / 4;
  for (int64_t first = 0; first < cfg.bm; first += passRows) {
    // The K loop's buffers (or the previous pass's rows) are free once
    // every warpgroup's wgmmas (or adds) have read them. Element (i, j)[hh
    // * 2 + tt]: column 16 (warp's first tile + i) + 8 hh + g, row 8 j + 2
    // t + tt.
    barrier(b);
    for (int64_t i = 0; i < cfg.tilesPerWarp(); ++i)
      for (int64_t j = first / 8; j < std::min(first + passRows, cfg.bm) / 8; ++j) {
        Value vec = acc->second[i * cfg.tokenTiles() + j];
        for (int64_t e = 0; e < 4; ++e) {
          const int64_t hh = e / 2, tt = e % 2;
          Value row = idxAdd(b, idxMul(b, t, 2), j * 8 - first + tt);
          Value column =
              idxAdd(b, idxAdd(b, idxMul(b, warp, 16 * cfg.tilesPerWarp()), i * 16 + hh * 8), g);
          Value word = idxAdd(b, idxMul(b, row, rowWords), column);
          LLVM::StoreOp::create(b, vector::ExtractOp::create(b, vec, ArrayRef<int64_t>{e}),
                                sharedPtr(b, idxMul(b, word, 4)), /*alignment=*/4);
        }
      }
    barrier(b);
    // Unit u: staged row u / U, columns 4 (u % U) + 0..3 of the tile's U =
    // BN / 4.
    for (int64_t u0 = 0; u0 < passRows * units; u0 += cfg.threads()) {
      Value u = idxAdd(b, tid, u0);
      Value staged = idxDiv(b, u, units), quad = idxRem(b, u, units);
      Value row = idxAdd(b, staged, first);
      auto inTile = scf::IfOp::create(
          b,
          arith::AndIOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, staged, idxConst(b, passRows)),
              arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows)),
          false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inTile.thenBlock());
      Value sorted = idxAdd(b, row0, row);
      Value id = memref::LoadOp::create(b, rowIds, ValueRange{sorted});
      Value token = arith::IndexCastUIOp::create(
          b, b.getIndexType(),
          arith::AndIOp::create(b, id, arith::ConstantIntOp::create(b, 0xFFFFFF, 32)));
      auto real = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, token, tokens), false);
      b.setInsertionPointToStart(real.thenBlock());
      Value w = arith::SelectOp::create(
          b, useWeights, memref::LoadOp::create(b, rowWeights, ValueRange{sorted}), one);
      Value column = idxAdd(b, col0, idxMul(b, quad, 4));
      Value v = LLVM::LoadOp::create(
          b, v4f32,
          sharedPtr(b, idxMul(b, idxAdd(b, idxMul(b, staged, rowWords), idxMul(b, quad, 4)), 4)),
          /*alignment=*/16);
      SmallVector<Value> x;
      for (int64_t e = 0; e < 4; ++e)
        x.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e}));
      if (bias) {
        // Whole units are real or padding (the real columns are a multiple
        // of 32); padding reads no bias.
        Value add =
            arith::AndIOp::create(b, biased,
                                  arith::CmpIOp::create(b, arith::CmpIPredicate::ult, column,
                                                        mapping.lookup(op.getCols())));
        auto withBias = scf::IfOp::create(b, TypeRange(SmallVector<Type>(4, f32)), add, true);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(withBias.thenBlock());
          Value at = idxAdd(b, mapping.lookup(op.getBiasRow()), column);
          SmallVector<Value> sums;
          for (int64_t e = 0; e < 4; ++e)
            sums.push_back(arith::AddFOp::create(
                b, x[size_t(e)], memref::LoadOp::create(b, bias, ValueRange{idxAdd(b, at, e)})));
          scf::YieldOp::create(b, sums);
          b.setInsertionPointToStart(withBias.elseBlock());
          scf::YieldOp::create(b, x);
        }
        x.assign(withBias.getResults().begin(), withBias.getResults().end());
      }
      for (Value &xe : x)
        xe = arith::MulFOp::create(b, xe, w);
      Value at = arith::IndexCastUIOp::create(
          b, b.getI64Type(), idxAdd(b, arith::MulIOp::create(b, token, ld), column));
      redAddV4(b, LLVM::GEPOp::create(b, globalPtr, f32, out, ArrayRef<LLVM::GEPArg>{at}), x);
    }
  }
  return success();
}
