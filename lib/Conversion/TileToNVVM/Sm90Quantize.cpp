//===- Sm90Quantize.cpp - Inline MXFP4 quantization of A on sm_90a --------===//
//
// Chunk r of a thread is 8 consecutive BF16 values (one 16-byte load):
// c = tid + 128 r, token row c / (BK/8), and inside the row the 16-byte unit
// u = c % (BK/8) with t = u % 4, p = (u / 4) % 4, kc = u / 16 at
// K = kc*128 + 32t + 8p. The four lanes p = 0..3 (lane xor 4, xor 8) hold one
// 32-block: two shuffles finish its |x| maximum. The E8M0 code follows the
// op's rounding mode (E8M0Emitter, the CPU quantizer's integer formulas), the
// E2M1 codes are RNE with saturation by bf16x2 arithmetic where the scale
// keeps everything normal, else (and for the codes of a dump) by f32
// arithmetic (sm_90 has no FP4 convert), and the dequantized BF16 values go
// to shared memory in the wgmma core-matrix layout of NvLowering.h (four
// 4-byte stores per chunk). A thread's chunks, and in the decode prologue a
// batch of K steps, are quantized together: all block maxima, shuffles and
// scale codes, then one branch onto the packed path for all of them, so
// their dependency chains overlap (one chunk after another, ncu put the
// quantizer's stalls on each chain's fixed latencies).
// Rows past M read as zero (their loads are clamped to a valid row); warps
// with no row below M store zeros without quantizing. The quantizer kernels
// write codes and scales (quant_mxfp4) or the dequantized words in the
// activation image (qdq_mxfp4: directly, or at BM 64 staged in shared memory
// and bulk-copied) instead.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/E8M0Emitter.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Format/E2M1Grid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cassert>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

Sm90Emitter::QuantCoords Sm90Emitter::quantCoords(ImplicitLocOpBuilder &b, int64_t r) {
  const int64_t unitsPerRow = cfg.bk / 8;
  Value c = idxAdd(b, tid, r * cfg.threads());
  Value u = idxRem(b, c, unitsPerRow);
  QuantCoords q;
  q.row = idxDiv(b, c, unitsPerRow);
  q.t = idxRem(b, u, 4);
  q.p = idxRem(b, idxDiv(b, u, 4), 4);
  q.kc = idxDiv(b, u, 16);
  q.col8 = idxAdd(b, idxAdd(b, idxMul(b, q.kc, 16), idxMul(b, q.t, 4)), q.p);
  return q;
}

/// The 32-bit word of chunk word w (K = 32t + 8p + w + {0, 4}) of `row` in
/// a core-matrix layout whose slabs hold `groups` 8-row groups: MMA step
/// s = 2p + w/2 is slab `slab0` + s, half h = w%2, and the word is word t of
/// row row%8 of core matrix (slab, row/8, h) (NvLowering.h).
static Value coreMatrixWord(ImplicitLocOpBuilder &b, Value slab0, int64_t groups, Value row,
                            Value p, Value t, int64_t w) {
  Value slab = idxAdd(b, slab0, idxAdd(b, idxMul(b, p, 2), w / 2));
  Value matrix =
      idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, slab, groups), idxDiv(b, row, 8)), 2), w % 2);
  return idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, matrix, 8), idxRem(b, row, 8)), 4), t);
}

Value nv::imageSlab0(ImplicitLocOpBuilder &b, Value block, Value ld, Value chunk) {
  Value chunks = idxDiv(b, ld, 128);
  return idxMul(b, idxAdd(b, arith::MulIOp::create(b, block, chunks), chunk), 8);
}

void Sm90Emitter::storeChunk(ImplicitLocOpBuilder &b, const QuantCoords &q, ArrayRef<Value> words,
                             Value buffer) {
  // Chunk kc's 8 steps are slabs 8kc.., of BM/8 groups each.
  Value slab0 = idxMul(b, q.kc, 8);
  for (int64_t w = 0; w < 4; ++w) {
    Value at = coreMatrixWord(b, slab0, cfg.bm / 8, q.row, q.p, q.t, w);
    memref::StoreOp::create(b, words[w], smem, ValueRange{idxAdd(b, at, buffer)});
  }
}

SmallVector<Value> Sm90Emitter::loadActivations(ImplicitLocOpBuilder &b, tile::LoadOp op,
                                                Value col) {
  Value base = mapping.lookup(op.getBase()), row0 = mapping.lookup(op.getRow()),
        ldv = mapping.lookup(op.getLd()), valid = mapping.lookup(op.getValidRows());
  auto v8 = VectorType::get({8}, b.getBF16Type());
  Value zero = arith::ConstantOp::create(b, v8, DenseElementsAttr::get(v8, 0.0f));
  Value lastRow = arith::SubIOp::create(b, valid, idxConst(b, 1));
  Value units = idxDiv(b, ldv, 8), colUnit = idxDiv(b, col, 8);
  // A K tail (K not a whole number of steps): chunks past K read as zeros
  // from the row's last chunk (K % 32 == 0: a block is in or out whole).
  const bool kTail = sm90KTail(op.getLd());
  SmallVector<Value> chunks;
  for (int64_t r = 0; r < cfg.quantChunks(); ++r) {
    QuantCoords q = quantCoords(b, r);
    Value row = idxAdd(b, row0, arith::MinUIOp::create(b, q.row, lastRow));
    Value unit = idxAdd(b, colUnit, q.col8);
    Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, q.row, valid);
    if (kTail) {
      ok = arith::AndIOp::create(b, ok, idxLess(b, unit, units));
      unit = arith::MinUIOp::create(b, unit, idxAdd(b, units, -1));
    }
    Value at = idxAdd(b, arith::MulIOp::create(b, row, units), unit);
    Value x = memref::LoadOp::create(b, base, ValueRange{at});
    chunks.push_back(arith::SelectOp::create(b, ok, x, zero));
  }
  return chunks;
}

namespace {
/// A chunk quantized by the exact path: its dequantized words (word j holds
/// elements j and j + 4), E2M1 magnitude codes, sign bits and NaN scale.
struct ExactChunk {
  SmallVector<Value> words;
  Value codes, sign, nanScale;
};
} // namespace

/// The 4 words of an 8-element bf16 chunk as the core-matrix layout takes
/// them: word j holds elements j and j + 4 (NvLowering.h).
static SmallVector<Value> chunkWords(ImplicitLocOpBuilder &b, Value chunk) {
  Value pairs =
      vector::ShuffleOp::create(b, chunk, chunk, ArrayRef<int64_t>{0, 4, 1, 5, 2, 6, 3, 7});
  Value words = vector::BitCastOp::create(b, VectorType::get({4}, b.getI32Type()), pairs);
  SmallVector<Value> out;
  for (int64_t w = 0; w < 4; ++w)
    out.push_back(vector::ExtractOp::create(b, words, ArrayRef<int64_t>{w}));
  return out;
}

/// Any scale, NaN and Inf included: x * 2^-s in f32, RNE onto the E2M1
/// grid with saturation, times 2^s.
static ExactChunk quantizeExactly(ImplicitLocOpBuilder &b, Value x, Value code) {
  auto i32 = b.getI32Type();
  auto v8f = VectorType::get({8}, b.getF32Type());
  auto v8i = VectorType::get({8}, i32);
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto splatI = [&](int64_t v) {
    return arith::ConstantOp::create(b, v8i, DenseElementsAttr::get(v8i, int32_t(v))).getResult();
  };
  auto splatF = [&](float v) {
    return arith::ConstantOp::create(b, v8f, DenseElementsAttr::get(v8f, v)).getResult();
  };
  ExactChunk out;
  out.nanScale = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, code, c32(0xFF));
  // x * 2^(127 - s) is exact in f32 (s = 254 needs the subnormal 2^-127).
  Value invBits = arith::ShLIOp::create(b, arith::SubIOp::create(b, c32(254), code), c32(23));
  Value is254 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, code, c32(254));
  invBits = arith::SelectOp::create(b, is254, c32(0x00400000), invBits);
  Value inv =
      vector::BroadcastOp::create(b, v8f, arith::BitcastOp::create(b, b.getF32Type(), invBits));
  Value scale = vector::BroadcastOp::create(b, v8f, emitDequantScale(b, b.getLoc(), code));
  Value scaled = arith::MulFOp::create(b, arith::ExtFOp::create(b, v8f, x), inv);
  Value bits = arith::BitcastOp::create(b, v8i, scaled);
  out.sign = arith::AndIOp::create(b, bits, splatI(int32_t(0x80000000u)));
  Value a = arith::BitcastOp::create(b, v8f, arith::AndIOp::create(b, bits, splatI(0x7FFFFFFF)));
  // RNE onto {0, .5, 1, 1.5, 2, 3, 4, 6} with saturation, arithmetically:
  // below 1 the grid is the multiples of 0.5, which adding and subtracting
  // 2^22 (f32 ulp 0.5) rounds to, ties to even; from 1 on it is the floats
  // with one mantissa bit (add half an ulp of that precision, plus the
  // kept bit for ties to even, and truncate), capped at 6. A NaN element
  // makes the block's scale NaN, so its value is NaN whatever this gives,
  // and its codes are dumped as 0.
  Value small = arith::SubFOp::create(b, arith::AddFOp::create(b, a, splatF(4194304.0f)),
                                      splatF(4194304.0f));
  Value aBits = arith::BitcastOp::create(b, v8i, a);
  Value keep = arith::AndIOp::create(b, arith::ShRUIOp::create(b, aBits, splatI(22)), splatI(1));
  Value rounded = arith::AndIOp::create(
      b, arith::AddIOp::create(b, arith::AddIOp::create(b, aBits, splatI(0x1FFFFF)), keep),
      splatI(int32_t(0xFFC00000u)));
  // Non-negative floats order like their bits: an integer min caps at 6.
  Value big = arith::BitcastOp::create(
      b, v8f, arith::MinUIOp::create(b, rounded, splatI(0x40C00000)));
  Value below1 = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, a, splatF(1.0f));
  Value mags = arith::SelectOp::create(b, below1, small, big);
  // The E2M1 codes (for the dump): 2a below 1, else 2 + 2e + m from the
  // exponent and mantissa bit of the result.
  out.codes = arith::SelectOp::create(
      b, below1, arith::FPToSIOp::create(b, v8i, arith::MulFOp::create(b, mags, splatF(2.0f))),
      arith::SubIOp::create(b,
                            arith::ShRUIOp::create(b, arith::BitcastOp::create(b, v8i, mags),
                                                   splatI(22)),
                            splatI(252)));
  Value signedQ = arith::BitcastOp::create(
      b, v8f, arith::OrIOp::create(b, arith::BitcastOp::create(b, v8i, mags), out.sign));
  Value deq = arith::TruncFOp::create(b, VectorType::get({8}, b.getBF16Type()),
                                      arith::MulFOp::create(b, signedQ, scale));
  out.words = chunkWords(b, deq);
  return out;
}

/// The dequantized words of chunk `x` for a scale code of the packed path
/// (onE2M1Grid), two bf16 lanes per instruction; Format/E2M1Grid.cpp is the
/// host model of these instructions. The E2M1 grid times 2^s
/// has steps of 2^(max(e, s) - 1) at |x| of exponent e; adding and
/// subtracting C = 2^(max(e, s) + 6) rounds to them in bf16 (an 8-bit
/// significand: C's ulp is that step, and RNE's ties to even are E2M1's).
/// Then the cap 6 * 2^s, and the sign back on (-0 stays -0, as exactly).
static SmallVector<Value> qdqOnBf16Grid(ImplicitLocOpBuilder &b, Value x, Value code) {
  auto i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto bothLanes = [&](Value half) {
    return arith::MulIOp::create(b, half, c32(0x00010001)).getResult();
  };
  // bf16 2^s is the code in the exponent field; 6 * 2^s = 1.5 * 2^(s+2).
  Value scale = bothLanes(arith::ShLIOp::create(b, code, c32(7)));
  Value cap = bothLanes(arith::OrIOp::create(
      b, arith::ShLIOp::create(b, arith::AddIOp::create(b, code, c32(2)), c32(7)), c32(0x40)));
  static constexpr const char *kGridAsm = "{\n"
                                          ".reg .b32 a, e, q;\n"
                                          "and.b32 a, $1, 0x7FFF7FFF;\n"
                                          "and.b32 e, $1, 0x7F807F80;\n"
                                          "max.bf16x2 e, e, $2;\n"
                                          "add.u32 e, e, 0x03000300;\n"
                                          "add.rn.bf16x2 q, a, e;\n"
                                          "sub.rn.bf16x2 q, q, e;\n"
                                          "min.bf16x2 q, q, $3;\n"
                                          "and.b32 a, $1, 0x80008000;\n"
                                          "or.b32 $0, q, a;\n"
                                          "}";
  // Lane-wise, so on the words in layout order.
  SmallVector<Value> out;
  for (Value word : chunkWords(b, x)) {
    auto op = LLVM::InlineAsmOp::create(b, i32, ValueRange{word, scale, cap},
                                        b.getStringAttr(kGridAsm), b.getStringAttr("=r,r,r,r"),
                                        UnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                                        LLVM::AsmDialectAttr(), ArrayAttr());
    out.push_back(op.getRes());
  }
  return out;
}

Value nv::chunkAmax(ImplicitLocOpBuilder &b, Value x) {
  auto v8i16 = VectorType::get({8}, b.getI16Type());
  Value xi = vector::BitCastOp::create(b, v8i16, x);
  Value mag16 = arith::AndIOp::create(
      b, xi, arith::ConstantOp::create(b, DenseElementsAttr::get(v8i16, int16_t(0x7FFF))));
  return arith::ExtUIOp::create(
      b, b.getI32Type(), vector::ReductionOp::create(b, vector::CombiningKind::MAXUI, mag16));
}

SmallVector<Value> Sm90Emitter::blockScaleCodes(ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                                ArrayRef<Value> chunks) {
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  SmallVector<Value> amax;
  for (Value x : chunks)
    amax.push_back(chunkAmax(b, x));
  // The 4 lanes of a 32-block are lane xor 4 and xor 8; the chunks' shuffles
  // are independent, so each round issues them all before it waits.
  for (int64_t d : {4, 8}) {
    SmallVector<Value> other;
    for (Value a : amax)
      other.push_back(
          gpu::ShuffleOp::create(b, a, c32(d), c32(32), gpu::ShuffleMode::XOR).getShuffleResult());
    for (size_t i = 0; i < amax.size(); ++i)
      amax[i] = arith::MaxUIOp::create(b, amax[i], other[i]);
  }
  SmallVector<Value> codes;
  for (Value a : amax)
    codes.push_back(
        emitScaleFromAmax(b, b.getLoc(), arith::ShLIOp::create(b, a, c32(16)), op.getRounding()));
  return codes;
}

// Every chunk on the packed path when every chunk's scale allows it (rows
// past M count as allowed: their words are zeros), else chunk by chunk with
// the f32 path where needed. One branch for the common case keeps the
// chunks' work in one block, where their instructions interleave.
SmallVector<SmallVector<Value>> nv::qdqChunks(ImplicitLocOpBuilder &b, ArrayRef<Value> chunks,
                                              ArrayRef<Value> codes, ArrayRef<Value> rowOk) {
  auto i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  const int64_t n = int64_t(chunks.size());
  SmallVector<Value> onGrid;
  Value allEasy = arith::ConstantIntOp::create(b, 1, 1);
  for (int64_t r = 0; r < n; ++r) {
    onGrid.push_back(arith::CmpIOp::create(
        b, arith::CmpIPredicate::ule, arith::SubIOp::create(b, codes[r], c32(kE2M1GridMinCode)),
        c32(kE2M1GridMaxCode - kE2M1GridMinCode)));
    Value easy = arith::OrIOp::create(
        b, onGrid.back(),
        arith::XOrIOp::create(b, rowOk[r], arith::ConstantIntOp::create(b, 1, 1)));
    allEasy = arith::AndIOp::create(b, allEasy, easy);
  }
  auto allIf = scf::IfOp::create(b, SmallVector<Type>(4 * n, i32), allEasy, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(allIf.thenBlock());
    SmallVector<Value> words;
    for (int64_t r = 0; r < n; ++r)
      llvm::append_range(words, qdqOnBf16Grid(b, chunks[r], codes[r]));
    scf::YieldOp::create(b, words);
    b.setInsertionPointToStart(allIf.elseBlock());
    words.clear();
    for (int64_t r = 0; r < n; ++r) {
      auto gridIf = scf::IfOp::create(b, SmallVector<Type>(4, i32), onGrid[r], /*withElse=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(gridIf.thenBlock());
      scf::YieldOp::create(b, qdqOnBf16Grid(b, chunks[r], codes[r]));
      b.setInsertionPointToStart(gridIf.elseBlock());
      scf::YieldOp::create(b, quantizeExactly(b, chunks[r], codes[r]).words);
      llvm::append_range(words, gridIf.getResults());
    }
    scf::YieldOp::create(b, words);
  }
  SmallVector<SmallVector<Value>> out(n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t w = 0; w < 4; ++w)
      out[r].push_back(arith::SelectOp::create(b, rowOk[r], allIf.getResult(4 * r + w), c32(0)));
  return out;
}

/// `words` i32 results: body's when `live` (the warp has a row below M),
/// else zeros without the work; the builder continues after the branch.
static SmallVector<Value> ifLiveElseZeros(ImplicitLocOpBuilder &b, Value live, int64_t words,
                                          llvm::function_ref<SmallVector<Value>()> body) {
  auto liveIf =
      scf::IfOp::create(b, SmallVector<Type>(words, b.getI32Type()), live, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(liveIf.elseBlock());
    scf::YieldOp::create(
        b, SmallVector<Value>(words, arith::ConstantIntOp::create(b, 0, 32).getResult()));
    b.setInsertionPointToStart(liveIf.thenBlock());
    scf::YieldOp::create(b, body());
  }
  b.setInsertionPointAfter(liveIf);
  return SmallVector<Value>(liveIf.getResults());
}

void Sm90Emitter::quantizeToSmem(ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                 ArrayRef<Value> chunks, Value col, Value buffer) {
  if (op.getDumpData())
    return quantizeAndDump(b, op, chunks, col, buffer);
  quantizeSteps(b, op, StepChunks{chunks, col, buffer});
}

void Sm90Emitter::quantizeSteps(ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                ArrayRef<StepChunks> steps) {
  assert(!op.getDumpData() && "the dump quantizes chunk by chunk (quantizeAndDump)");
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  Value valid = mapping.lookup(load.getValidRows());
  // Chunk r of every step sits at the same coordinates in its step.
  SmallVector<QuantCoords> coords;
  for (int64_t r = 0; r < int64_t(steps.front().chunks.size()); ++r)
    coords.push_back(quantCoords(b, r));
  SmallVector<Value> chunks;
  for (const StepChunks &s : steps)
    llvm::append_range(chunks, s.chunks);
  const int64_t n = int64_t(chunks.size()), perStep = int64_t(coords.size());
  // A warp's chunks cover whole rows in order: a warp whose first row is
  // past M has only zeros to store and skips the work (decode: M = 1).
  Value warpRow = idxDiv(b, idxMul(b, warp, 32), cfg.bk / 8);
  Value live = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, warpRow, valid);
  SmallVector<Value> results = ifLiveElseZeros(b, live, 4 * n, [&] {
    SmallVector<Value> codes = blockScaleCodes(b, op, chunks), rowOk;
    for (int64_t j = 0; j < n; ++j)
      rowOk.push_back(
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, coords[j % perStep].row, valid));
    SmallVector<SmallVector<Value>> words = qdqChunks(b, chunks, codes, rowOk);
    SmallVector<Value> flat;
    for (int64_t j = 0; j < n; ++j) {
      if (op.getQdq() && !cfg.stagesImage)
        storeImageChunk(b, op, coords[j % perStep], words[j], steps[j / perStep].col);
      llvm::append_range(flat, words[j]);
    }
    return flat;
  });
  for (int64_t j = 0; j < n; ++j)
    if (Value buffer = steps[j / perStep].buffer)
      storeChunk(b, coords[j % perStep], ArrayRef<Value>(results).slice(4 * j, 4), buffer);
}

void Sm90Emitter::quantizeAndDump(ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                  ArrayRef<Value> chunks, Value col, Value buffer) {
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  Value valid = mapping.lookup(load.getValidRows());
  for (auto [r, x] : llvm::enumerate(chunks)) {
    QuantCoords q = quantCoords(b, int64_t(r));
    Value warpRow = idxDiv(b, idxAdd(b, idxMul(b, warp, 32), int64_t(r) * cfg.threads()),
                           cfg.bk / 8);
    Value live = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, warpRow, valid);
    SmallVector<Value> words = ifLiveElseZeros(b, live, 4, [&] {
      Value code = blockScaleCodes(b, op, x).front();
      ExactChunk exact = quantizeExactly(b, x, code);
      dumpChunk(b, op, q, exact.codes, exact.sign, exact.nanScale, code, col);
      if (op.getQdq() && !cfg.stagesImage)
        storeImageChunk(b, op, q, exact.words, col);
      return exact.words;
    });
    if (buffer)
      storeChunk(b, q, words, buffer);
  }
}

void Sm90Emitter::storeImageChunk(ImplicitLocOpBuilder &b, tile::QuantizeOp op,
                                  const QuantCoords &q, ArrayRef<Value> words, Value col) {
  // Rows that exist only; word w of the chunk goes where storeChunk would
  // put it in a 128-row tile, tile = the row's image block
  // (Kernels/Sm90Pipeline.h, activationImageIndex). Stores need not
  // complete before the workgroup ends: the small blocks' latency.
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, q.row,
                                   mapping.lookup(load.getValidRows()));
  auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value row = idxAdd(b, mapping.lookup(load.getRow()), q.row);
  Value slab0 = imageSlab0(b, idxDiv(b, row, sm90::kImageBlockRows), mapping.lookup(load.getLd()),
                           idxAdd(b, idxDiv(b, col, 128), q.kc));
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value image = LLVM::AddrSpaceCastOp::create(b, global, mapping.lookup(op.getQdq()));
  for (int64_t w = 0; w < 4; ++w) {
    Value at = coreMatrixWord(b, slab0, sm90::kImageBlockRows / 8,
                              idxRem(b, row, sm90::kImageBlockRows), q.p, q.t, w);
    Value at64 = arith::IndexCastUIOp::create(b, b.getI64Type(), at);
    Value ptr = LLVM::GEPOp::create(b, global, b.getI32Type(), image, ArrayRef<LLVM::GEPArg>{at64});
    LLVM::StoreOp::create(b, words[w], ptr, /*alignment=*/4);
  }
}

void Sm90Emitter::storeImageFromSmem(ImplicitLocOpBuilder &b, tile::QuantizeOp op, Value col) {
  // The block sits in shared memory as a BM-row GEMM buffer: per 128-K chunk
  // kc and MMA step s a slab of BM/8 token groups x 256 bytes, which is
  // groups g0.. of the image's slab (block, chunk, s) (Kernels/Sm90Pipeline.h,
  // activationImageIndex): one bulk copy each, of the groups holding rows
  // below M (their rows past M hold zeros, as loadActivations reads them,
  // and those MMA columns are never stored). Thread i < chunks x 8 issues
  // copy i; full 128-byte lines, where 4-byte stores would write 32-byte
  // pieces of four lines per warp instruction.
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  fenceProxyAsync(b); // the generic stores above, before the async proxy reads
  gpu::BarrierOp::create(b);
  const int64_t copies = cfg.bk / 128 * 8, groupBytes = 256;
  Value mine = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, idxConst(b, copies));
  auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value m0 = mapping.lookup(load.getRow());
  Value rows = arith::MinUIOp::create(b, mapping.lookup(load.getValidRows()), idxConst(b, cfg.bm));
  Value groups = idxDiv(b, idxAdd(b, rows, 7), 8);
  Value block = idxDiv(b, m0, sm90::kImageBlockRows);
  Value g0 = idxDiv(b, idxRem(b, m0, sm90::kImageBlockRows), 8);
  Value kc = idxDiv(b, tid, 8), s = idxRem(b, tid, 8);
  Value slab = idxAdd(
      b, imageSlab0(b, block, mapping.lookup(load.getLd()), idxAdd(b, idxDiv(b, col, 128), kc)), s);
  // Byte offsets; the image's stay below 2^31 (Ops/QuantizeMx.cpp checks).
  const int64_t slabBytes = sm90::kImageBlockRows / 8 * groupBytes;
  Value to = idxAdd(b, idxMul(b, slab, slabBytes), idxMul(b, g0, groupBytes));
  Value from = idxMul(b, idxAdd(b, idxMul(b, kc, 8), s), cfg.bm / 8 * groupBytes);
  // The image is a plain pointer argument (TileToNVVM.cpp): its bytes
  // exceed 32-bit indexing.
  auto i64 = b.getI64Type();
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value image = LLVM::AddrSpaceCastOp::create(b, global, mapping.lookup(op.getQdq()));
  Value to64 = arith::IndexCastUIOp::create(b, i64, to);
  Value dst = LLVM::GEPOp::create(b, global, b.getI8Type(), image, ArrayRef<LLVM::GEPArg>{to64});
  Value smemBytes = arith::IndexCastUIOp::create(
      b, i64, idxAdd(b, memref::ExtractAlignedPointerAsIndexOp::create(b, smem), from));
  Value src = LLVM::IntToPtrOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 3), smemBytes);
  Value bytes = arith::IndexCastUIOp::create(b, b.getI32Type(), idxMul(b, groups, groupBytes));
  NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, dst, src, bytes, Value(), Value());
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
  // The block's shared memory lives until its copy has read it; the writes
  // complete before the grid does (what the GEMM's griddepcontrol.wait
  // waits for).
  NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
}

void Sm90Emitter::dumpChunk(ImplicitLocOpBuilder &b, tile::QuantizeOp op, const QuantCoords &q,
                            Value codes, Value sign, Value nanScale, Value code, Value col) {
  auto i32 = b.getI32Type();
  auto v8i = VectorType::get({8}, i32);
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto splatI = [&](int64_t v) {
    return arith::ConstantOp::create(b, v8i, DenseElementsAttr::get(v8i, int32_t(v))).getResult();
  };
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  Value row0 = mapping.lookup(load.getRow()), ldv = mapping.lookup(load.getLd()),
        valid = mapping.lookup(load.getValidRows());
  {
    // Packed codes (sign in bit 3, all zero under a NaN scale) and the
    // scale byte, for rows that exist.
    Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, q.row, valid);
    auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value signBit = arith::ShRUIOp::create(b, sign, splatI(28));
    Value full = arith::OrIOp::create(b, codes, signBit);
    Value word = c32(0);
    for (int64_t e = 0; e < 8; ++e) {
      Value ce = vector::ExtractOp::create(b, full, ArrayRef<int64_t>{e});
      word = arith::OrIOp::create(b, word, arith::ShLIOp::create(b, ce, c32(4 * e)));
    }
    word = arith::SelectOp::create(b, nanScale, c32(0), word);
    Value row = idxAdd(b, row0, q.row);
    Value at = idxAdd(b, arith::MulIOp::create(b, row, idxDiv(b, ldv, 8)),
                      idxAdd(b, idxDiv(b, col, 8), q.col8));
    memref::StoreOp::create(b, word, mapping.lookup(op.getDumpData()), ValueRange{at});
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, q.p, idxConst(b, 0));
    auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value sAt = idxAdd(b, arith::MulIOp::create(b, row, idxDiv(b, ldv, 32)),
                       idxAdd(b, idxDiv(b, col, 32), idxAdd(b, idxMul(b, q.kc, 4), q.t)));
    memref::StoreOp::create(b, arith::TruncIOp::create(b, b.getI8Type(), code),
                            mapping.lookup(op.getDumpScales()), ValueRange{sAt});
  }
}
