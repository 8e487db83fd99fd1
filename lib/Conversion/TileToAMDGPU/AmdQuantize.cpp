//===- AmdQuantize.cpp - Inline MXFP4 quantization of A into LDS ----------===//
//
// Each thread loads elemsPerThread() consecutive BF16 values of one 32-block
// (16-byte global loads), takes the integer max of |x| bit patterns, and
// combines it with the other lanes of its block through xor shuffles. The
// E8M0 scale follows the op's rounding mode (E8M0Emitter, bit-identical to the
// CPU quantizer), the hardware converts with RNE and saturation, and the
// packed bytes plus the scale byte go to the current LDS stage.
//
// LDS layout of A (per stage, BM rows of BK/2 bytes):
//  - gfx950: row-major; a lane's MFMA operand (16 B) is contiguous.
//  - gfx1250: per 128-K step the four 16-byte K chunks are stored c0,c2,c1,c3,
//    so a lane's two chunks (K 32h.., 64+32h..) are one 32-byte read.
// A scales use the byte convention of the matching weight-scale layout, so
// the MMA picks A and B scale bytes the same way.
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/E8M0Emitter.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

LogicalResult KernelEmitter::lowerQuantize(ImplicitLocOpBuilder &b, tile::QuantizeOp op) {
  PendingLoad *load = handle<PendingLoad>(op.getInput());
  if (!load)
    return op.emitOpError() << "on " << cfg.chip
                            << " the quantized tile must come straight from mxtile.load";
  tile::LoadOp ld = load->op;
  tile::TileType in = op.getInput().getType();
  if (in.getRows() != cfg.bm || in.getCols() != cfg.bk)
    return op.emitOpError() << "quantizes a " << in.getRows() << "x" << in.getCols()
                            << " tile but the MMA consumes " << cfg.bm << "x" << cfg.bk;
  if (!in.getElementType().isBF16())
    return op.emitOpError() << "inline quantization on " << cfg.chip << " takes bf16 input";
  if (!stageA)
    return op.emitOpError() << "must sit inside the K loop (scf.for) on " << cfg.chip;

  const int64_t elems = cfg.elemsPerThread(), lanesPerBlock = 32 / elems;
  Value base = mapping.lookup(ld.getBase()), row0 = mapping.lookup(ld.getRow()),
        col0 = mapping.lookup(ld.getCol()), ldv = mapping.lookup(ld.getLd());
  // Rows past the M tail re-read the last valid row; the store drops them.
  Value lastRow = idxAdd(b, row0, arith::SubIOp::create(b, mapping.lookup(ld.getValidRows()),
                                                     idxConst(b, 1)));
  auto i32 = b.getI32Type();
  auto cst = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto bf16Vec = VectorType::get({elems}, b.getBF16Type());
  auto i16Vec = VectorType::get({elems}, b.getI16Type());
  // A K tail (K not a whole number of steps): blocks past K read as zeros
  // from the row's last block (K % 32 == 0: a block is in or out whole).
  const bool kTail = hasTail(ld.getLd(), cfg.bk);
  Value zeros = arith::ConstantOp::create(b, bf16Vec, DenseElementsAttr::get(bf16Vec, 0.0f));

  for (int64_t p = 0; p < cfg.quantPasses(); ++p) {
    Value t = idxAdd(b, tid, p * cfg.threads());
    Value blk = lanesPerBlock > 1 ? idxDiv(b, t, lanesPerBlock) : t;
    Value part = lanesPerBlock > 1 ? idxRem(b, t, lanesPerBlock) : Value();
    Value r = idxDiv(b, blk, cfg.blocksPerRow()), kb = idxRem(b, blk, cfg.blocksPerRow());
    Value grow = arith::MinUIOp::create(b, idxAdd(b, row0, r), lastRow);
    Value colIn = idxMul(b, kb, 32);
    if (part)
      colIn = idxAdd(b, colIn, idxMul(b, part, elems));
    Value col = idxAdd(b, col0, colIn), inK;
    if (kTail) {
      inK = idxLess(b, col, ldv);
      col = arith::MinUIOp::create(b, col, arith::SubIOp::create(b, ldv, idxConst(b, elems)));
    }
    Value gidx = idxAdd(b, arith::MulIOp::create(b, grow, ldv), col);
    Value x = vector::LoadOp::create(b, bf16Vec, base, ValueRange{gidx});
    if (kTail)
      x = arith::SelectOp::create(b, inK, x, zeros);

    // amax over the block: integer max of |bf16| bit patterns, then lanes.
    Value bits = vector::BitCastOp::create(b, i16Vec, x);
    Value absMask = arith::ConstantOp::create(b, i16Vec, DenseElementsAttr::get(i16Vec, int16_t(0x7FFF)));
    Value mag = arith::AndIOp::create(b, bits, absMask);
    Value amax16 = vector::ReductionOp::create(b, vector::CombiningKind::MAXUI, mag);
    Value amax = arith::ExtUIOp::create(b, i32, amax16);
    for (int64_t d = 1; d < lanesPerBlock; d *= 2) {
      auto sh = gpu::ShuffleOp::create(b, amax, cst(d), cst(cfg.wave), gpu::ShuffleMode::XOR);
      amax = arith::MaxUIOp::create(b, amax, sh.getShuffleResult());
    }
    Value amaxBits = arith::ShLIOp::create(b, amax, cst(16));
    Value code = emitScaleFromAmax(b, b.getLoc(), amaxBits, op.getRounding());
    Value scale = emitDequantScale(b, b.getLoc(), code);
    // Under a NaN scale every element code is 0 (docs/Numerics.md).
    Value nanScale = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, code, cst(0xFF));

    SmallVector<Value> words;
    for (int64_t dw = 0; dw < elems / 8; ++dw) {
      Value word = cfg.hw->packFp4(b, x, dw, scale);
      words.push_back(arith::SelectOp::create(b, nanScale, cst(0), word));
    }
    auto wordsTy = VectorType::get({int64_t(words.size())}, i32);
    Value wv = vector::FromElementsOp::create(b, wordsTy, words);
    Value bytes = vector::BitCastOp::create(
        b, VectorType::get({int64_t(words.size()) * 4}, b.getI8Type()), wv);

    // LDS byte column of this thread's packed values, and its scale byte.
    auto [lcol, sOff] = cfg.hw->ldsPlacement(b, cfg, r, kb);
    if (part)
      lcol = idxAdd(b, lcol, idxMul(b, part, elems / 2));
    Value aIdx = idxAdd(b, stageA, idxAdd(b, idxMul(b, r, cfg.bk / 2), lcol));
    vector::StoreOp::create(b, bytes, ldsA, ValueRange{aIdx});
    Value code8 = arith::TruncIOp::create(b, b.getI8Type(), code);
    Value sIdx = idxAdd(b, stageS, sOff);
    if (part) {
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, part, idxConst(b, 0));
      auto ifOp = scf::IfOp::create(b, first, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, code8, ldsS, ValueRange{sIdx});
    } else {
      memref::StoreOp::create(b, code8, ldsS, ValueRange{sIdx});
    }
  }
  gpu::BarrierOp::create(b);
  tiles[op.getData()] = LdsData{};
  tiles[op.getScales()] = LdsScales{};
  return success();
}
