//===- Sm90WarpSplitK.cpp - Decode with warps splitting K (sm_90a) --------===//
//
// The warp-split variant (KernelSpec::warpSplitK) is for decode (M <= 8):
// its time is the weights' bytes, and the wgmma variants spend it in
// warpgroup-wide waits and split-K arrivals. Here a workgroup of W warps
// owns BN = 16 T weight rows and all of K; warp w takes the 128-K chunks
// [w C / W, (w + 1) C / W) of the C = K / 128 and runs them alone with
// mma.sync m16n8k16 (weight rows as M, tokens as N, as the wgmma kernels):
//
// - Lane (g, t) reads its 2 x 16 bytes of each of its T weight tiles and
//   its scale word straight from global memory (the sm90-mma16 layouts put
//   them where its A fragment wants them, NvLowering.h), kAhead chunks
//   ahead of the MMAs.
// - It quantizes token g's 32-block t of the chunk itself, the one whose
//   values its B fragments hold for all 8 MMA steps (K = 32t + 8(s/2) +
//   2(s%2) + h + {0, 4}: word 2(s%2) + h of 8-element piece s/2): a whole
//   block in one lane, so no shuffles, and bit for bit the quantizer's
//   arithmetic (Sm90Quantize.cpp). Tokens past M are zeros.
// - Each of the chunk's 8 MMA steps dequantizes the A fragments
//   (Sm90Mma.cpp) and issues one mma.sync per tile into f32 accumulators.
//
// After the loop the warps' partial tiles meet in shared memory and the
// first warp sums them in warp order (the result does not depend on
// timing) and alone runs the epilogue. No barrier, no shared memory and no
// cross-warp wait in the loop; no split-K workspace.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/E8M0Emitter.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Chunks whose loads are in flight ahead of the MMAs, per warp, where
/// warps take more than one (with one each, the table's choice, a queue
/// would only hold registers).
static constexpr int64_t kMaxAhead = 2;

namespace {
/// One chunk's loads of a lane: words[i * 2 + h] (vector<4xi32>) of weight
/// tile i, its scale word, and token g's block t as 4 x vector<8xbf16>.
struct ChunkLoads {
  SmallVector<Value> words;
  Value scales;
  SmallVector<Value> act;
  size_t size() const { return words.size() + 1 + act.size(); }
  void appendTo(SmallVectorImpl<Value> &out) const {
    llvm::append_range(out, words);
    out.push_back(scales);
    llvm::append_range(out, act);
  }
  static ChunkLoads from(ValueRange v, size_t nWords) {
    ChunkLoads c;
    c.words.assign(v.begin(), v.begin() + nWords);
    c.scales = v[nWords];
    c.act.assign(v.begin() + nWords + 1, v.end());
    return c;
  }
};
} // namespace

/// acc (4 x f32) += A (4 x bf16x2) * B (2 x bf16x2): one mma.sync m16n8k16.
static SmallVector<Value> mmaSync(ImplicitLocOpBuilder &b, ArrayRef<Value> acc, ArrayRef<Value> a,
                                  Value b0, Value b1) {
  SmallVector<Value> operands(a.begin(), a.end());
  operands.append({b0, b1});
  llvm::append_range(operands, acc);
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(4, b.getF32Type()));
  auto op = LLVM::InlineAsmOp::create(
      b, result, operands,
      b.getStringAttr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, "
                      "{$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"),
      b.getStringAttr("=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3"), UnitAttr(), UnitAttr(),
      LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> out;
  for (int64_t q = 0; q < 4; ++q)
    out.push_back(LLVM::ExtractValueOp::create(b, op.getRes(), ArrayRef<int64_t>{q}));
  return out;
}

LogicalResult Sm90Emitter::lowerWarpSplitKLoop(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                               tile::LoadOp load, tile::QuantizeOp quant,
                                               tile::LoadWeightOp weight,
                                               tile::LoadScalesOp scales) {
  const int64_t warps = cfg.warpSplitK, tiles = cfg.tilesPerWarp();
  const int64_t chunks = int64_t(weight.getK()) / 128;
  const int64_t kAhead = std::min<int64_t>(kMaxAhead, (chunks + warps - 1) / warps);
  auto init = accumulators.find(loop.getInitArgs()[0]);
  if (init == accumulators.end() || init->second.size() != size_t(tiles))
    return loop.emitOpError() << "must start from an mxtile.zero accumulator of the BN tile";

  // This warp's chunks.
  Value first = idxDiv(b, idxMul(b, warp, chunks), warps);
  Value end = idxDiv(b, idxMul(b, idxAdd(b, warp, 1), chunks), warps);
  Value last = idxAdd(b, end, -1);

  Value tile0 = idxDiv(b, mapping.lookup(weight.getRow()), 16);
  Value words = mapping.lookup(weight.getBase()), scaleWords = mapping.lookup(scales.getBase());
  Value act = mapping.lookup(load.getBase()), valid = mapping.lookup(load.getValidRows());
  Value units = idxDiv(b, mapping.lookup(load.getLd()), 8);
  // Token g's row (clamped to a row that exists; rows past M read as zeros).
  Value rowOk = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, g, valid);
  Value row =
      idxAdd(b, mapping.lookup(load.getRow()), arith::MinUIOp::create(b, g, idxAdd(b, valid, -1)));
  Value actRow = idxAdd(b, arith::MulIOp::create(b, row, units), idxMul(b, t, 4));

  // Token g's block t of `chunk` (with one token, token 0's), 4 x 8 bf16;
  // past a K tail zeros, read from the row's last block.
  const bool kTail = sm90KTail(load.getLd());
  auto loadBlock = [&](Value chunk) {
    Value at = idxAdd(b, actRow, idxMul(b, chunk, 16));
    Value inK;
    if (kTail) {
      Value rowEnd = idxAdd(b, arith::MulIOp::create(b, row, units), units);
      inK = idxLess(b, at, rowEnd);
      at = arith::MinUIOp::create(b, at, idxAdd(b, rowEnd, -4));
    }
    auto v8 = VectorType::get({8}, b.getBF16Type());
    Value zero = arith::ConstantOp::create(b, v8, DenseElementsAttr::get(v8, 0.0f));
    SmallVector<Value> loaded;
    for (int64_t p = 0; p < 4; ++p) {
      Value x = memref::LoadOp::create(b, act, ValueRange{idxAdd(b, at, p)});
      loaded.push_back(kTail ? arith::SelectOp::create(b, inK, x, zero).getResult() : x);
    }
    return loaded;
  };
  auto fetch = [&](Value chunk, bool withAct = true) {
    ChunkLoads c;
    for (int64_t i = 0; i < tiles; ++i)
      loadWeightFragments(b, words, idxAdd(b, tile0, i), chunks, chunk, c.words);
    // The 32-row group's scale word: rows g, g + 8 of tile (tile0 + i).
    Value group = idxDiv(b, tile0, 2);
    c.scales = memref::LoadOp::create(
        b, scaleWords,
        ValueRange{
            idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, group, chunks), chunk), sm90::kGroupScaleWords),
                   lane)});
    if (withAct)
      c.act = loadBlock(chunk);
    return c;
  };

  // Scale bytes 2 * (tile % 2) + h hold rows g (h = 0) and g + 8 (h = 1).
  auto i32 = b.getI32Type();
  auto scaleByte = [&](int64_t i, int64_t h) {
    Value parity = tiles == 2 ? idxConst(b, i) : idxRem(b, tile0, 2);
    return arith::IndexCastUIOp::create(b, i32, idxAdd(b, idxMul(b, parity, 2), h)).getResult();
  };

  // One 32-block (4 x 8 bf16, zeros unless `ok`) quantized and
  // dequantized: its 16 words, word 4p + w holding elements w and w + 4
  // of piece p.
  auto quantizeBlock = [&](ArrayRef<Value> loaded, Value ok) {
    auto v8 = VectorType::get({8}, b.getBF16Type());
    Value zero = arith::ConstantOp::create(b, v8, DenseElementsAttr::get(v8, 0.0f));
    SmallVector<Value> pieces;
    for (Value x : loaded)
      pieces.push_back(arith::SelectOp::create(b, ok, x, zero));
    Value amax = chunkAmax(b, pieces[0]);
    for (int64_t p = 1; p < 4; ++p)
      amax = arith::MaxUIOp::create(b, amax, chunkAmax(b, pieces[p]));
    Value code = emitScaleFromAmax(
        b, b.getLoc(), arith::ShLIOp::create(b, amax, arith::ConstantIntOp::create(b, 16, 32)),
        quant.getRounding());
    SmallVector<Value> flat;
    for (const SmallVector<Value> &words :
         qdqChunks(b, pieces, SmallVector<Value>(4, code), SmallVector<Value>(4, ok)))
      llvm::append_range(flat, words);
    return flat;
  };

  // The chunk's 8 MMA steps on its weights and B words `bw` (token g's
  // block t, as quantizeBlock gives them).
  auto mmaChunk = [&](const ChunkLoads &c, ArrayRef<Value> bw, MutableArrayRef<Value> accs) {
    Value sc[2][2];
    for (int64_t i = 0; i < tiles; ++i)
      for (int64_t h = 0; h < 2; ++h)
        sc[i][h] = scalePair(b, c.scales, scaleByte(i, h), cfg.foldedScales);
    for (int64_t s = 0; s < 8; ++s) {
      const int j0 = int(s % 2) * 2;
      Value b0 = bw[(s / 2) * 4 + j0], b1 = bw[(s / 2) * 4 + j0 + 1];
      for (int64_t i = 0; i < tiles; ++i) {
        Value w0 = vector::ExtractOp::create(b, c.words[i * 2], ArrayRef<int64_t>{s / 2});
        Value w1 = vector::ExtractOp::create(b, c.words[i * 2 + 1], ArrayRef<int64_t>{s / 2});
        SmallVector<Value> a = weightFragment(b, w0, w1, j0, sc[i][0], sc[i][1], cfg.foldedScales);
        SmallVector<Value> acc;
        for (int64_t q = 0; q < 4; ++q)
          acc.push_back(vector::ExtractOp::create(b, accs[i], ArrayRef<int64_t>{q}));
        accs[i] = vector::FromElementsOp::create(b, VectorType::get({4}, b.getF32Type()),
                                                 mmaSync(b, acc, a, b0, b1));
      }
    }
  };
  auto compute = [&](const ChunkLoads &c, MutableArrayRef<Value> accs) {
    mmaChunk(c, quantizeBlock(c.act, rowOk), accs);
  };

  SmallVector<Value> partial(init->second.begin(), init->second.end());
  if (chunks == warps) {
    // One chunk a warp (the table's choice): no loop, no queue.
    compute(fetch(first), partial);
    return sumWarpTiles(b, loop, partial);
  }
  // Loop-carried: the accumulators, then kAhead chunks of loads (a queue;
  // loads past the warp's last chunk are clamped to it, harmless). With
  // one token (`single`: M = 1, or a last M tile of one row) most lanes
  // would quantize rows past M: instead every 8 chunks one pass quantizes
  // token 0's blocks of 8 chunks, lane (g, t) chunk c + g's block t, and
  // each chunk's B words come from lanes 4 j + t by shuffles (lanes of
  // tokens g > 0 take zeros). The pass's words are carried too.
  auto runLoop = [&](bool single) {
    SmallVector<Value> inits(init->second.begin(), init->second.end());
    size_t perChunk = 0, nWords = 0;
    for (int64_t d = 0; d < kAhead; ++d) {
      ChunkLoads c = fetch(arith::MinUIOp::create(b, idxAdd(b, first, d), last), !single);
      perChunk = c.size();
      nWords = c.words.size();
      c.appendTo(inits);
    }
    const int64_t passWords = single ? 16 : 0;
    inits.append(passWords, arith::ConstantIntOp::create(b, 0, 32).getResult());
    auto forOp = scf::ForOp::create(b, first, end, idxConst(b, 1), inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    ValueRange args = forOp.getRegionIterArgs();
    Value iv = forOp.getInductionVar();
    SmallVector<Value> accs(args.begin(), args.begin() + tiles);
    SmallVector<ChunkLoads> queue;
    for (int64_t d = 0; d < kAhead; ++d)
      queue.push_back(ChunkLoads::from(args.slice(tiles + d * perChunk, perChunk), nWords));
    Value ahead = arith::MinUIOp::create(b, idxAdd(b, iv, kAhead), last);
    ChunkLoads next = fetch(ahead, !single);
    SmallVector<Value> pass;
    if (!single) {
      compute(queue.front(), accs);
    } else {
      Value j = idxRem(b, arith::SubIOp::create(b, iv, first), 8);
      Value begins = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, j, idxConst(b, 0));
      auto passIf = scf::IfOp::create(b, SmallVector<Type>(16, i32), begins, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(passIf.thenBlock());
        // With one row, actRow is token 0's: lane (g, t) takes chunk iv + g.
        SmallVector<Value> loaded = loadBlock(arith::MinUIOp::create(b, idxAdd(b, iv, g), last));
        scf::YieldOp::create(b, quantizeBlock(loaded, arith::ConstantIntOp::create(b, 1, 1)));
        b.setInsertionPointToStart(passIf.elseBlock());
        scf::YieldOp::create(b, ValueRange(args.take_back(16)));
      }
      pass.assign(passIf.getResults().begin(), passIf.getResults().end());
      Value src = arith::IndexCastUIOp::create(b, i32, idxAdd(b, idxMul(b, j, 4), t));
      Value width = arith::ConstantIntOp::create(b, 32, 32);
      Value tokenZero = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, g, idxConst(b, 0));
      Value zero = arith::ConstantIntOp::create(b, 0, 32);
      SmallVector<Value> bw;
      for (Value w : pass) {
        Value got =
            gpu::ShuffleOp::create(b, w, src, width, gpu::ShuffleMode::IDX).getShuffleResult();
        bw.push_back(arith::SelectOp::create(b, tokenZero, got, zero));
      }
      mmaChunk(queue.front(), bw, accs);
    }
    SmallVector<Value> yields(accs);
    for (int64_t d = 1; d < kAhead; ++d)
      queue[d].appendTo(yields);
    next.appendTo(yields);
    llvm::append_range(yields, pass);
    scf::YieldOp::create(b, yields);
    return SmallVector<Value>(forOp.getResults().begin(), forOp.getResults().begin() + tiles);
  };
  // One token or several: a uniform branch, each with its own loop.
  Value one = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, valid, idxConst(b, 1));
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto which = scf::IfOp::create(b, SmallVector<Type>(tiles, v4f32), one, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(which.thenBlock());
    scf::YieldOp::create(b, runLoop(true));
    b.setInsertionPointToStart(which.elseBlock());
    scf::YieldOp::create(b, runLoop(false));
  }
  partial.assign(which.getResults().begin(), which.getResults().end());
  return sumWarpTiles(b, loop, partial);
}

LogicalResult Sm90Emitter::sumWarpTiles(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                        ArrayRef<Value> partial) {
  const int64_t warps = cfg.warpSplitK, tiles = cfg.tilesPerWarp();
  auto i32 = b.getI32Type();
  // The warps' partial tiles through shared memory: vector i of lane l of
  // warp w at 16-byte unit (w T + i) 32 + l; the first warp sums them in
  // warp order and runs the epilogue; the others leave.
  auto v4i32 = VectorType::get({4}, i32);
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto at = [&](Value w, int64_t i) {
    return idxMul(b, idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, w, tiles), i), 32), lane), 4);
  };
  for (int64_t i = 0; i < tiles; ++i)
    vector::StoreOp::create(b, vector::BitCastOp::create(b, v4i32, partial[i]), smem,
                            ValueRange{at(warp, i)});
  gpu::BarrierOp::create(b);
  Value isFirst = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warp, idxConst(b, 0));
  firstGroupOnly = scf::IfOp::create(b, isFirst, /*withElseRegion=*/false);
  b.setInsertionPointToStart(firstGroupOnly.thenBlock());
  SmallVector<Value> sums(partial);
  for (int64_t i = 0; i < tiles; ++i)
    for (int64_t w = 1; w < warps; ++w) {
      Value part = vector::LoadOp::create(b, v4i32, smem, ValueRange{at(idxConst(b, w), i)});
      sums[i] = arith::AddFOp::create(b, sums[i], vector::BitCastOp::create(b, v4f32, part));
    }
  accumulators[loop.getResult(0)] = sums;
  return success();
}
