//===- AmdStoreActMx.cpp - MoE stage 1's fused epilogue on AMD ------------===//
//
// mxtile.store_act_mx on gfx950 and gfx1250. The tile's columns pair gate
// and up rows in groups of 16 (8 gate, then the same 8 intermediate
// columns' up rows), and an MMA tile's column is its lane l % 16, so lane l
// holds gate values and lane l ^ 8 the up values of the same rows and
// intermediate column: one xor-8 shuffle gives each lane both operands.
// Lanes l % 16 < 8 then stage act(g w, u w) in f32 in LDS ([BM, BN/2],
// rows padded by 4 words); after a barrier each thread quantizes whole
// (row, 32-column block) units with the CPU quantizer's integer compares
// (Conversion/MxBlockEmitter.h, as sm_90a's Sm90StoreActMx.cpp does) and
// stores 16 bytes of codes and a scale byte at the op's scale layout.
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

int64_t Config::actMxRowWords() const { return bn / 2 + kActMxRowPadWords; }

LogicalResult KernelEmitter::lowerStoreActMx(ImplicitLocOpBuilder &b, tile::StoreActMxOp op) {
  Accumulator *acc = handle<Accumulator>(op.getValue());
  if (!acc)
    return op.emitOpError() << "on " << cfg.chip << " only accumulator tiles can be stored";
  if (op.getWorkspace())
    return op.emitOpError() << "split-K reductions are not lowered for AMD yet";
  if (!ldsE)
    return op.emitOpError() << "has no LDS staging buffer (the kernel must be lowered whole)";
  FloatType f32 = b.getF32Type();
  const int regs = cfg.accPerLane();
  const int64_t rowWords = cfg.actMxRowWords();
  const ActMxOperands ops = mapActMxOperands(b, op, mapping);
  Value rows = arith::MinUIOp::create(b, ops.valid, idxConst(b, cfg.bm));
  Value lastRow = idxAdd(b, rows, -1);
  Value isGate = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, l16, idxConst(b, 8));

  // Accumulator register r of lane l is C[regs (l / 16) + r][l % 16] of
  // its MMA tile; wave w's 16-column group q = w colTiles + j holds
  // intermediate columns 8q .. 8q + 7.
  for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
    for (int r = 0; r < regs; ++r) {
      Value row = idxAdd(b, idxMul(b, lgroup, regs), mt * 16 + r);
      Value w = ops.rowWeight(b, row, lastRow);
      for (int64_t j = 0; j < cfg.colTiles(); ++j) {
        Value mine =
            vector::ExtractOp::create(b, acc->parts[mt * cfg.colTiles() + j], ArrayRef<int64_t>{r});
        Value other = gpu::ShuffleOp::create(b, mine, /*offset=*/8, cfg.wave, gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        Value a = emitGatedActivation(b, op.getKind(), arith::MulFOp::create(b, mine, w),
                                      arith::MulFOp::create(b, other, w), ops.params);
        auto ifGate = scf::IfOp::create(b, isGate, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifGate.thenBlock());
        Value column = idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, wave, cfg.colTiles()), j), 8), l16);
        memref::StoreOp::create(b, a, ldsE,
                                ValueRange{idxAdd(b, idxMul(b, row, rowWords), column)});
      }
    }
  gpu::BarrierOp::create(b);

  // Unit u: row u / B, block u % B of the tile's B = BN / 64 blocks.
  const int64_t blocks = cfg.bn / 64;
  Value codes = mapping.lookup(op.getCodes());
  auto v4f32 = VectorType::get({4}, f32);
  auto v16i8 = VectorType::get({16}, b.getI8Type());
  for (int64_t u0 = 0; u0 < cfg.bm * blocks; u0 += cfg.threads()) {
    Value u = idxAdd(b, tid, u0);
    Value row = idxDiv(b, u, blocks), block = idxRem(b, u, blocks);
    auto ifRow =
        scf::IfOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifRow.thenBlock());
    SmallVector<Value> x;
    Value first = idxAdd(b, idxMul(b, row, rowWords), idxMul(b, block, 32));
    for (int64_t q = 0; q < 8; ++q) {
      Value v = vector::LoadOp::create(b, v4f32, ldsE, ValueRange{idxAdd(b, first, q * 4)});
      for (int64_t e = 0; e < 4; ++e)
        x.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e}));
    }
    // The block's first intermediate column and the output row; the codes
    // at byte (row ld + column) / 2, 16-byte aligned (ld and column are
    // multiples of 32).
    Value column = idxAdd(b, idxDiv(b, ops.col0, 2), idxMul(b, block, 32));
    Value outRow = idxAdd(b, ops.row0, row);
    Value words = emitActMxUnit(b, ops, x, outRow, column);
    Value codeAt = idxDiv(b, idxAdd(b, idxMul(b, outRow, ops.ld), column), 2);
    vector::StoreOp::create(b, vector::BitCastOp::create(b, v16i8, words), codes,
                            ValueRange{codeAt}, /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
  return success();
}
