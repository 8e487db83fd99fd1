//===- AmdLoadMx.cpp - Activations that arrive as MXFP4 on AMD ------------===//
//
// mxtile.load_mx: the activations were quantized before (moe_quant,
// moe_actq), so a K step only copies them into the LDS stage the MMA reads,
// in the same placement the inline quantizer writes (AmdChip::ldsPlacement):
// each thread takes whole 32-element blocks, one 16-byte load of codes and
// one scale byte per block, the scales row-major or in gfx1250's sorted-row
// MoE layout (the op's scaleRep). Rows past the valid rows become zero
// codes with scale 1.0 and read no memory beyond the last valid row.
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/MxBlockEmitter.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

/// E8M0 1.0: the scale of the zero codes that stand in for missing rows.
static constexpr int64_t kUnitScale = 0x7F;

LogicalResult KernelEmitter::lowerLoadMx(ImplicitLocOpBuilder &b, tile::LoadMxOp op) {
  tile::TileType t = op.getResult().getType();
  if (t.getRows() != cfg.bm || t.getCols() != cfg.bk)
    return op.emitOpError() << "loads a " << t.getRows() << "x" << t.getCols()
                            << " tile but the MMA consumes " << cfg.bm << "x" << cfg.bk;
  if (!stageA)
    return op.emitOpError() << "must sit inside the K loop (scf.for) on " << cfg.chip;

  Value data = mapping.lookup(op.getData()), scales = mapping.lookup(op.getScales());
  Value row0 = mapping.lookup(op.getRow()), col0 = mapping.lookup(op.getCol()),
        ld = mapping.lookup(op.getLd()), valid = mapping.lookup(op.getValidRows());
  // Missing rows re-address the last valid one (in bounds) and are zeroed.
  Value lastRow = idxAdd(b, row0, arith::SubIOp::create(b, valid, idxConst(b, 1)));
  Value rowBytes = idxDiv(b, ld, 2), rowScales = idxDiv(b, ld, 32);
  Value colBytes = idxDiv(b, col0, 2), colScales = idxDiv(b, col0, 32);
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  Value zeros = arith::ConstantOp::create(b, i8x16, DenseElementsAttr::get(i8x16, int8_t(0)));
  Value unit = arith::ConstantIntOp::create(b, kUnitScale, 8);

  const int64_t blocks = cfg.bm * cfg.blocksPerRow();
  for (int64_t first = 0; first < blocks; first += cfg.threads()) {
    Value blk = idxAdd(b, tid, first);
    // A partial last pass: threads past the tile's blocks copy nothing.
    scf::IfOp partial;
    if (first + cfg.threads() > blocks) {
      partial = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, blk, idxConst(b, blocks)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(partial.thenBlock());
    }
    Value r = idxDiv(b, blk, cfg.blocksPerRow()), kb = idxRem(b, blk, cfg.blocksPerRow());
    Value live = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r, valid);
    Value grow = arith::MinUIOp::create(b, idxAdd(b, row0, r), lastRow);
    Value codeAt = idxAdd(b, idxMul(b, grow, rowBytes), idxAdd(b, colBytes, idxMul(b, kb, 16)));
    Value codes = vector::LoadOp::create(b, i8x16, data, ValueRange{codeAt});
    codes = arith::SelectOp::create(b, live, codes, zeros);
    Value scaleAt =
        emitMoeScaleOffset(b, op.getScaleRep(), rowScales, grow, idxAdd(b, colScales, kb));
    Value scale = memref::LoadOp::create(b, scales, ValueRange{scaleAt});
    scale = arith::SelectOp::create(b, live, scale, unit);

    auto [lcol, sOff] = cfg.hw->ldsPlacement(b, cfg, r, kb);
    Value aIdx = idxAdd(b, stageA, idxAdd(b, idxMul(b, r, cfg.bk / 2), lcol));
    vector::StoreOp::create(b, codes, ldsA, ValueRange{aIdx});
    memref::StoreOp::create(b, scale, ldsS, ValueRange{idxAdd(b, stageS, sOff)});
    if (partial)
      b.setInsertionPointAfter(partial);
  }
  gpu::BarrierOp::create(b);
  tiles[op.getResult()] = LdsData{};
  tiles[op.getResultScales()] = LdsScales{};
  return success();
}
