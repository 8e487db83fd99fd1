//===- AmdStoreScatterAdd.cpp - MoE stage 2's atomic epilogue on AMD ------===//
//
// mxtile.store_scatter_add on gfx950 and gfx1250. Accumulator register r of
// lane l is C[regs (l / 16) + r][l % 16] of its MMA tile, so a lane holds
// whole rows' worth of one column per tile and adds its own elements: per
// row (a sorted row of one token's slot) its token id and routing weight
// are read once, per column the bias once, and each element goes to the
// token's f32 row by one atomic add (atomicrmw fadd on global memory); the
// 16 lanes of a row group add 16 consecutive columns. Rows of the
// sorting's padding (token >= tokens) and rows past the valid ones add
// nothing. K splits add their partial tiles the same way; only the first
// adds the bias (the tile program says which).
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

LogicalResult KernelEmitter::lowerStoreScatterAdd(ImplicitLocOpBuilder &b,
                                                  tile::StoreScatterAddOp op) {
  Accumulator *acc = handle<Accumulator>(op.getValue());
  if (!acc)
    return op.emitOpError() << "on " << cfg.chip << " only accumulator tiles can be stored";
  FloatType f32 = b.getF32Type();
  IntegerType i32 = b.getI32Type();
  const int regs = cfg.accPerLane();
  Value out = mapping.lookup(op.getOut()), row0 = mapping.lookup(op.getRow()),
        col0 = mapping.lookup(op.getCol()), ld = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows()), rowIds = mapping.lookup(op.getRowIds()),
        tokens = mapping.lookup(op.getTokens()), rowWeights = mapping.lookup(op.getRowWeights());
  Value useWeights =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mapping.lookup(op.getUseWeights()),
                            arith::ConstantIntOp::create(b, i32, 0));
  Value zero = arith::ConstantFloatOp::create(b, f32, APFloat(0.0f));
  Value one = arith::ConstantFloatOp::create(b, f32, APFloat(1.0f));
  Value rows = arith::MinUIOp::create(b, valid, idxConst(b, cfg.bm));
  Value lastRow = idxAdd(b, rows, -1);

  // This lane's column of each of its wave's MMA tiles, and its bias.
  Value waveColumn = idxAdd(b, col0, idxMul(b, wave, cfg.colTiles() * 16));
  SmallVector<Value> columns, biases;
  for (int64_t j = 0; j < cfg.colTiles(); ++j) {
    columns.push_back(idxAdd(b, idxAdd(b, waveColumn, j * 16), l16));
    if (!op.getBias()) {
      biases.push_back(zero);
      continue;
    }
    // Columns at or past the real ones have no bias (and are padding).
    Value bias = mapping.lookup(op.getBias());
    Value cols = mapping.lookup(op.getCols());
    Value with = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mapping.lookup(op.getWithBias()),
                              arith::ConstantIntOp::create(b, i32, 0)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, columns.back(), cols));
    auto ifBias = scf::IfOp::create(b, TypeRange{f32}, with, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifBias.thenBlock());
      Value at = idxAdd(b, mapping.lookup(op.getBiasRow()), columns.back());
      scf::YieldOp::create(b, ValueRange{memref::LoadOp::create(b, bias, ValueRange{at})});
      b.setInsertionPointToStart(ifBias.elseBlock());
      scf::YieldOp::create(b, ValueRange{zero});
    }
    biases.push_back(ifBias.getResult(0));
  }

  for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
    for (int r = 0; r < regs; ++r) {
      Value row = idxAdd(b, idxMul(b, lgroup, regs), mt * 16 + r);
      // Rows past the valid ones read the last valid row (in bounds) and
      // add nothing.
      Value sorted = idxAdd(b, row0, arith::MinUIOp::create(b, row, lastRow));
      Value id = memref::LoadOp::create(b, rowIds, ValueRange{sorted});
      Value token = arith::IndexCastUIOp::create(
          b, b.getIndexType(),
          arith::AndIOp::create(b, id, arith::ConstantIntOp::create(b, i32, 0xFFFFFF)));
      Value w = memref::LoadOp::create(b, rowWeights, ValueRange{sorted});
      w = arith::SelectOp::create(b, useWeights, w, one);
      Value adds =
          arith::AndIOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows),
                                arith::CmpIOp::create(b, arith::CmpIPredicate::ult, token, tokens));
      auto ifAdds = scf::IfOp::create(b, adds, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifAdds.thenBlock());
      Value base = idxMul(b, token, ld);
      for (int64_t j = 0; j < cfg.colTiles(); ++j) {
        Value v =
            vector::ExtractOp::create(b, acc->parts[mt * cfg.colTiles() + j], ArrayRef<int64_t>{r});
        v = arith::MulFOp::create(b, arith::AddFOp::create(b, v, biases[size_t(j)]), w);
        memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addf, v, out,
                                    ValueRange{idxAdd(b, base, columns[size_t(j)])});
      }
    }
  return success();
}
