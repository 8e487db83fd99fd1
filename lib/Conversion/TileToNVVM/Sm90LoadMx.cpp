//===- Sm90LoadMx.cpp - Activations that arrive as MXFP4 on sm_90a ---------===//
//
// mxtile.load_mx: the activations were quantized before (the quant_mxfp4
// kernel, or the caller), so a K step only dequantizes. A thread takes whole
// 32-element blocks: one 16-byte load of packed codes and the block's E8M0
// byte, dequantized exactly to bf16x2 words of nibble pairs (j, j+4) (the
// weights' E2M1 -> BF16 conversion, Sm90Mma.cpp) and stored in the wgmma
// core-matrix layout. The lanes of a warp take 8 rows x 4 blocks of a row,
// whose words land in the 32 different banks (the inline quantizer's 4 lanes
// per block share one). Rows past M load row M-1 and become zero codes, so
// the MMA sees zeros there.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

Sm90Emitter::QuantCoords Sm90Emitter::mxBlockCoords(ImplicitLocOpBuilder &b, int64_t r) {
  // Block index -> (t, row within 8, token group, chunk), t fastest: the 32
  // lanes of a warp cover 8 rows x 4 t, the 32 banks of the core matrices.
  // Threads past the last block redo it (same values, same addresses).
  const int64_t blocks = cfg.bm * cfg.bk / 32;
  Value idx = arith::MinUIOp::create(b, idxAdd(b, tid, r * cfg.threads()), idxConst(b, blocks - 1));
  Value rest = idxDiv(b, idx, 32);
  QuantCoords q;
  q.t = idxRem(b, idx, 4);
  q.row = idxAdd(b, idxMul(b, idxRem(b, rest, cfg.bm / 8), 8), idxRem(b, idxDiv(b, idx, 4), 8));
  q.kc = idxDiv(b, rest, cfg.bm / 8);
  return q;
}

int64_t Sm90Emitter::mxBlocksPerThread() const {
  int64_t blocks = cfg.bm * cfg.bk / 32;
  return (blocks + cfg.threads() - 1) / cfg.threads();
}

SmallVector<Value> Sm90Emitter::loadMxActivations(ImplicitLocOpBuilder &b, tile::LoadMxOp op,
                                                  Value col) {
  Value codes = mapping.lookup(op.getData()), scales = mapping.lookup(op.getScales());
  Value row0 = mapping.lookup(op.getRow()), ldv = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows());
  Value lastRow = arith::SubIOp::create(b, valid, idxConst(b, 1));
  Value blocks = idxDiv(b, ldv, 32), colBlock = idxDiv(b, col, 32);
  auto v4 = VectorType::get({4}, b.getI32Type());
  Value zero = arith::ConstantOp::create(b, v4, DenseElementsAttr::get(v4, int32_t(0)));
  // A K tail: blocks past K read as zero codes of scale 1.0 (0x7F) from
  // the row's last block.
  const bool kTail = sm90KTail(op.getLd());
  SmallVector<Value> loaded;
  for (int64_t r = 0; r < mxBlocksPerThread(); ++r) {
    QuantCoords q = mxBlockCoords(b, r);
    Value row = idxAdd(b, row0, arith::MinUIOp::create(b, q.row, lastRow));
    Value block = idxAdd(b, colBlock, idxAdd(b, idxMul(b, q.kc, 4), q.t));
    Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, q.row, valid);
    Value inK;
    if (kTail) {
      inK = idxLess(b, block, blocks);
      ok = arith::AndIOp::create(b, ok, inK);
      block = arith::MinUIOp::create(b, block, idxAdd(b, blocks, -1));
    }
    // One 16-byte unit of codes and one scale byte per 32-element block.
    Value at = idxAdd(b, arith::MulIOp::create(b, row, blocks), block);
    Value w = memref::LoadOp::create(b, codes, ValueRange{at});
    loaded.push_back(arith::SelectOp::create(b, ok, w, zero));
    Value s = arith::ExtUIOp::create(b, b.getI32Type(),
                                     memref::LoadOp::create(b, scales, ValueRange{at}));
    if (kTail)
      s = arith::SelectOp::create(b, inK, s, arith::ConstantIntOp::create(b, 0x7F, 32));
    loaded.push_back(s);
  }
  return loaded;
}

void Sm90Emitter::dequantizeToSmem(ImplicitLocOpBuilder &b, ArrayRef<Value> loaded, Value buffer) {
  for (int64_t r = 0; r < mxBlocksPerThread(); ++r) {
    QuantCoords q = mxBlockCoords(b, r);
    Value scale = scalePair(b, loaded[2 * r + 1], arith::ConstantIntOp::create(b, 0, 32));
    for (int64_t p = 0; p < 4; ++p) {
      // Word p: K = 32t + 8p .. +7, stored as the chunk (t, p) of the inline quantizer.
      Value word = vector::ExtractOp::create(b, loaded[2 * r], ArrayRef<int64_t>{p});
      Value words[4]; // word j: elements (j, j + 4), as storeChunk wants
      for (int j = 0; j < 4; ++j)
        words[j] = dequantPair(b, word, j, scale);
      q.p = idxConst(b, p);
      storeChunk(b, q, words, buffer);
    }
  }
}
