//===- Sm90LoadMx.cpp - Activations that arrive as MXFP4 on sm_90a ---------===//
//
// mxtile.load_mx: the activations were quantized before (the quant_mxfp4
// kernel, or the caller), so a K step only dequantizes. Chunk r of a thread
// covers the same 8 elements as the inline quantizer's (Sm90Quantize.cpp):
// one i32 of packed codes and the block's E8M0 byte, dequantized exactly to
// the four bf16x2 words of nibble pairs (j, j+4) (the weights' E2M1 -> BF16
// conversion, Sm90Mma.cpp) and stored in the wgmma core-matrix layout. Rows past M load row M-1 and
// become zero codes, so the MMA sees zeros there.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

SmallVector<Value> Sm90Emitter::loadMxActivations(ImplicitLocOpBuilder &b, tile::LoadMxOp op,
                                                  Value col) {
  Value codes = mapping.lookup(op.getData()), scales = mapping.lookup(op.getScales());
  Value row0 = mapping.lookup(op.getRow()), ldv = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows());
  Value lastRow = arith::SubIOp::create(b, valid, idxConst(b, 1));
  Value words = idxDiv(b, ldv, 8), blocks = idxDiv(b, ldv, 32);
  Value colWord = idxDiv(b, col, 8), colBlock = idxDiv(b, col, 32);
  Value zero = arith::ConstantIntOp::create(b, 0, 32);
  SmallVector<Value> chunks;
  for (int64_t r = 0; r < cfg.quantChunks(); ++r) {
    QuantCoords q = quantCoords(b, r);
    Value row = idxAdd(b, row0, arith::MinUIOp::create(b, q.row, lastRow));
    Value at = idxAdd(b, arith::MulIOp::create(b, row, words), idxAdd(b, colWord, q.col8));
    Value w = memref::LoadOp::create(b, codes, ValueRange{at});
    Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, q.row, valid);
    chunks.push_back(arith::SelectOp::create(b, ok, w, zero));
    Value sAt = idxAdd(b, arith::MulIOp::create(b, row, blocks),
                       idxAdd(b, colBlock, idxAdd(b, idxMul(b, q.kc, 4), q.t)));
    Value s = memref::LoadOp::create(b, scales, ValueRange{sAt});
    chunks.push_back(arith::ExtUIOp::create(b, b.getI32Type(), s));
  }
  return chunks;
}

void Sm90Emitter::dequantizeToSmem(ImplicitLocOpBuilder &b, ArrayRef<Value> chunks, Value buffer) {
  for (int64_t r = 0; r < cfg.quantChunks(); ++r) {
    QuantCoords q = quantCoords(b, r);
    Value scale = scalePair(b, chunks[2 * r + 1], arith::ConstantIntOp::create(b, 0, 32));
    Value words[4]; // word j: elements (j, j + 4), as storeChunk wants
    for (int j = 0; j < 4; ++j)
      words[j] = dequantPair(b, chunks[2 * r], j, scale);
    storeChunk(b, q, words, buffer);
  }
}
