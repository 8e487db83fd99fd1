//===- MoeElementwise.cpp - The MoE elementwise kernels (SIMT) ------------===//

#include "mxfp4/Kernels/MoeElementwise.h"
#include "SimtEmitter.h"
#include "mxfp4/Conversion/MxBlockEmitter.h"
#include "mxfp4/DSL/TileBuilder.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace mxfp4 {

namespace {

class ElementwiseEmitter : public SimtEmitter {
public:
  using SimtEmitter::SimtEmitter;

  Value bitsToF32(Value i) { return arith::BitcastOp::create(b, b.getF32Type(), i); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, x, i32(n)); }
  Value andi(Value x, int64_t m) { return arith::AndIOp::create(b, x, i32(m)); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }

  /// `lo` and `hi` rounded to bf16 (nearest even), in one word.
  Value packBf16(Value lo, Value hi) {
    auto bits = [&](Value v) {
      Value h = arith::TruncFOp::create(b, b.getBF16Type(), v);
      return arith::ExtUIOp::create(b, b.getI32Type(),
                                    arith::BitcastOp::create(b, b.getI16Type(), h))
          .getResult();
    };
    return ori(bits(lo), shl(bits(hi), 16));
  }

  /// The 32 f32 values of BF16 words [w0, w0 + 16) of `mem` (index w0).
  SmallVector<Value> loadBf16Block(Value mem, Value w0) {
    SmallVector<Value> x;
    for (int64_t j = 0; j < 16; ++j) {
      Value word = load(mem, add(w0, idx(j)));
      x.push_back(bitsToF32(shl(word, 16))); // element 2j
      x.push_back(bitsToF32(arith::AndIOp::create(b, word, i32(int64_t(0xFFFF0000u)))));
    }
    return x;
  }

  /// One 32-element block quantized as the CPU quantizer does.
  std::pair<SmallVector<Value, 4>, Value> quantizeBlock(ArrayRef<Value> x, ScaleRounding mode) {
    return emitQuantizeBlock(b, x, tile::toTile(mode));
  }

  /// Stores a block's code words at block `blk` (index) of the row-major
  /// codes and its scale at byte `scaleAt` of the scales.
  void storeBlock(ArrayRef<Value> words, Value scale, Value codes, Value scales, Value blk,
                  Value scaleAt) {
    for (int64_t w = 0; w < 4; ++w)
      store(words[size_t(w)], codes, add(mul(blk, idx(4)), idx(w)));
    store(arith::TruncIOp::create(b, b.getI8Type(), scale), scales, scaleAt);
  }
};

void finish(dsl::TileBuilder &tb, const KernelSpec &spec) {
  func::FuncOp f = tb.finish();
  f->setAttr(tile::TileDialect::getScheduleAttrName(),
             tile::ScheduleAttr::get(f.getContext(), spec.schedule()));
  f->setAttr(tile::TileDialect::getSimtAttrName(), tb.builder().getI64IntegerAttr(spec.bn));
}

Value rawI32(dsl::Index v) { return v.value().getDefiningOp<arith::IndexCastOp>().getIn(); }

/// moe_quant and moe_actq: thread (row, block) of the valid rows.
void buildQuantizers(dsl::TileBuilder &tb, const KernelSpec &spec) {
  ImplicitLocOpBuilder &b = tb.builder();
  Type i32 = b.getI32Type();
  const bool act = spec.op == OpKind::MoeActQuant;
  Value input = tb.bufferArg(i32);                     // BF16 pairs
  Value rowsInfo = tb.bufferArg(act ? tb.f32() : i32); // sorted weights | sorted ids
  Value numValid = tb.bufferArg(i32);
  Value codes = tb.bufferArg(i32), scales = tb.bufferArg(tb.i8());
  Value debug = act ? tb.bufferArg(tb.f32()) : Value();
  // moe_actq's optional bias: [E, 2 padded] f32 in the input's column
  // order, row r's expert experts[r / blockM] (used when hasBias).
  Value bias = act ? tb.bufferArg(tb.f32()) : Value();
  Value experts = act ? tb.bufferArg(i32) : Value();
  Value p0, p1, doweight, writeDebug, tokens, blockM, hasBias;
  if (act) {
    p0 = tb.f32Arg();
    p1 = tb.f32Arg();
    doweight = rawI32(tb.i32Arg());
    writeDebug = rawI32(tb.i32Arg());
    blockM = tb.i32Arg().value();
    hasBias = rawI32(tb.i32Arg());
  } else {
    tokens = rawI32(tb.i32Arg());
  }
  ElementwiseEmitter s(b, spec.bn);
  using P = SimtEmitter::P;
  // Rows of K elements padded (moePaddedRow): blocks past K are zero
  // codes with scale 1.0.
  const int64_t padded = moePaddedRow(spec.arch, spec.k), blocks = padded / 32;
  Value thread = s.globalThread();
  Value row = s.divu(thread, s.idx(blocks)), kb = s.remu(thread, s.idx(blocks));
  Value valid = s.toIndex(s.load(numValid, s.idx(0)));
  Value blk = thread; // row * blocks + kb
  Value scaleAt = emitMoeScaleOffset(b, spec.moeScaleRep, s.idx(blocks), row, kb);
  auto storeZeros = [&] {
    SmallVector<Value> zeros(4, s.i32(0));
    s.storeBlock(zeros, s.i32(0x7F), codes, scales, blk, scaleAt);
  };
  Value inRow = s.cmp(P::ult, kb, s.idx(spec.k / 32));
  s.when(s.cmp(P::ult, row, valid), [&] {
    s.when(s.cmp(P::uge, kb, s.idx(spec.k / 32)), storeZeros);
    if (!act) {
      Value token = s.andi(s.load(rowsInfo, row), 0xFFFFFF);
      Value real = s.cmp(P::ult, token, tokens);
      s.when(arith::AndIOp::create(b, real, inRow), [&] {
        // Row `token` of hidden: K / 2 words a row.
        Value w0 = s.add(s.mul(s.toIndex(token), s.idx(spec.k / 2)), s.mul(kb, s.idx(16)));
        auto [words, scale] = s.quantizeBlock(s.loadBf16Block(input, w0), spec.rounding);
        s.storeBlock(words, scale, codes, scales, blk, scaleAt);
      });
      s.when(arith::AndIOp::create(b, s.cmp(P::uge, token, tokens), inRow), storeZeros);
      return;
    }
    s.when(inRow, [&] {
      // The input pairs gate and up columns in groups of 16 (moe_gemm's
      // prepared W1, Ops/FusedMoe.h): block kb's 32 gate and 32 up values
      // are the 64 columns from 64 kb, words [row * padded + 32 kb, +32)
      // of the [rows, 2 padded] input; word w holds gate (w % 8 < 4) or up
      // values 8 (w / 8) + 2 (w % 4) and the next.
      const int64_t inter = spec.k;
      Value w0 = s.add(s.mul(row, s.idx(padded)), s.mul(kb, s.idx(32)));
      SmallVector<Value> lo = s.loadBf16Block(input, w0);
      SmallVector<Value> hi = s.loadBf16Block(input, s.add(w0, s.idx(16)));
      lo.append(hi.begin(), hi.end());
      // The bias of the row's expert, the same 64 columns.
      SmallVector<Type> f32s(64, b.getF32Type());
      SmallVector<Value> biases = s.ifElse(
          s.cmp(P::ne, hasBias, s.i32(0)), f32s,
          [&] {
            Value e = s.toIndex(s.load(experts, s.divu(row, blockM)));
            Value b0 = s.add(s.mul(e, s.idx(2 * padded)), s.mul(kb, s.idx(64)));
            SmallVector<Value> v;
            for (int64_t c = 0; c < 64; ++c)
              v.push_back(s.load(bias, s.add(b0, s.idx(c))));
            return v;
          },
          [&] { return SmallVector<Value>(64, s.f32(0.0f)); });
      SmallVector<Value> g(32), u(32);
      for (size_t e = 0; e < 64; ++e) {
        const size_t w = e / 2, at = 8 * (w / 8) + 2 * (w % 4) + e % 2;
        (w % 8 < 4 ? g : u)[at] = s.fadd(lo[e], biases[e]);
      }
      Value w = s.select(s.cmp(P::ne, doweight, s.i32(0)), s.load(rowsInfo, row), s.f32(1.0f));
      const GatedParams params = emitGatedParams(b, p0, p1);
      SmallVector<Value> a;
      for (size_t j = 0; j < 32; ++j)
        a.push_back(emitGatedActivation(b, tile::toTile(spec.activation), s.fmul(g[j], w),
                                        s.fmul(u[j], w), params));
      s.when(s.cmp(P::ne, writeDebug, s.i32(0)), [&] {
        Value d0 = s.add(s.mul(row, s.idx(inter)), s.mul(kb, s.idx(32)));
        for (size_t j = 0; j < 32; ++j)
          s.store(a[j], debug, s.add(d0, s.idx(int64_t(j))));
      });
      auto [words, scale] = s.quantizeBlock(a, spec.rounding);
      s.storeBlock(words, scale, codes, scales, blk, scaleAt);
    });
  });
  finish(tb, spec);
}

/// moe_reduce: thread (token, 8 columns).
void buildReduce(dsl::TileBuilder &tb, const KernelSpec &spec) {
  ImplicitLocOpBuilder &b = tb.builder();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value y = tb.bufferArg(i32), weights = tb.bufferArg(tb.f32()), positions = tb.bufferArg(i32);
  Value out = tb.bufferArg(i32);
  // The optional bias: [E, hidden] f32, sorted row p's expert experts[p /
  // blockM] (used when hasBias).
  Value bias = tb.bufferArg(tb.f32()), experts = tb.bufferArg(i32);
  dsl::Index tokenArg = tb.i32Arg();
  Value useWeights = rawI32(tb.i32Arg());
  Value blockM = tb.i32Arg().value(), hasBias = rawI32(tb.i32Arg());
  ElementwiseEmitter s(b, spec.bn);
  using P = SimtEmitter::P;
  const int64_t hidden = spec.n, topk = spec.k, chunks = hidden / 8;
  Value thread = s.globalThread();
  Value token = s.divu(thread, s.idx(chunks)), c = s.remu(thread, s.idx(chunks));
  s.when(s.cmp(P::ult, token, tokenArg.value()), [&] {
    // The slots unrolled, every load issued before the sums need it (a
    // loop of dependent loads left one slot in flight at a time). A slot
    // of no row (pos < 0: dropped or masked) reads row 0 and keeps the sum
    // as it was, which is skipping it.
    const int64_t rowWords = moePaddedRow(spec.arch, hidden) / 2;
    SmallVector<Value> pos, w, live;
    for (int64_t j = 0; j < topk; ++j) {
      Value slot = s.add(s.mul(token, s.idx(topk)), s.idx(j));
      pos.push_back(s.load(positions, slot));
      live.push_back(s.cmp(P::sge, pos.back(), s.i32(0)));
      w.push_back(s.select(s.cmp(P::ne, useWeights, s.i32(0)), s.load(weights, slot), s.f32(1.0f)));
    }
    SmallVector<Value> words;
    for (int64_t j = 0; j < topk; ++j) {
      Value row = s.toIndex(s.select(live[size_t(j)], pos[size_t(j)], s.i32(0)));
      Value w0 = s.add(s.mul(row, s.idx(rowWords)), s.mul(c, s.idx(4)));
      for (int64_t q = 0; q < 4; ++q)
        words.push_back(s.load(y, s.add(w0, s.idx(q))));
    }
    // Each live slot's bias row (its expert's, 8 columns).
    SmallVector<Type> f32s(8, f32);
    Value biased = s.cmp(P::ne, hasBias, s.i32(0));
    SmallVector<SmallVector<Value>> biases;
    for (int64_t j = 0; j < topk; ++j)
      biases.push_back(s.ifElse(
          arith::AndIOp::create(b, biased, live[size_t(j)]), f32s,
          [&] {
            Value e = s.toIndex(s.load(experts, s.divu(s.toIndex(pos[size_t(j)]), blockM)));
            Value b0 = s.add(s.mul(e, s.idx(hidden)), s.mul(c, s.idx(8)));
            SmallVector<Value> v;
            for (int64_t q = 0; q < 8; ++q)
              v.push_back(s.load(bias, s.add(b0, s.idx(q))));
            return v;
          },
          [&] { return SmallVector<Value>(8, s.f32(0.0f)); }));
    SmallVector<Value> acc(8, s.f32(0.0f));
    for (int64_t j = 0; j < topk; ++j)
      for (int64_t q = 0; q < 4; ++q) {
        Value word = words[size_t(4 * j + q)];
        Value lo = s.bitsToF32(s.shl(word, 16));
        Value hi = s.bitsToF32(arith::AndIOp::create(b, word, s.i32(int64_t(0xFFFF0000u))));
        for (auto [at, v] : {std::pair{2 * q, lo}, std::pair{2 * q + 1, hi}}) {
          Value &a = acc[size_t(at)];
          Value x = s.fadd(v, biases[size_t(j)][size_t(at)]);
          a = s.select(live[size_t(j)], s.fadd(a, s.fmul(w[size_t(j)], x)), a);
        }
      }
    Value o0 = s.add(s.mul(token, s.idx(hidden / 2)), s.mul(c, s.idx(4)));
    for (int64_t j = 0; j < 4; ++j)
      s.store(s.packBf16(acc[size_t(2 * j)], acc[size_t(2 * j + 1)]), out, s.add(o0, s.idx(j)));
  });
  finish(tb, spec);
}

/// moe_cast: thread (token, 8 columns) of the f32 [T, Hp] accumulator
/// rounded to the bf16 [T, H] output.
void buildCast(dsl::TileBuilder &tb, const KernelSpec &spec) {
  ImplicitLocOpBuilder &b = tb.builder();
  Value acc = tb.bufferArg(tb.f32()), out = tb.bufferArg(b.getI32Type());
  dsl::Index tokenArg = tb.i32Arg();
  ElementwiseEmitter s(b, spec.bn);
  using P = SimtEmitter::P;
  const int64_t hidden = spec.n, chunks = hidden / 8, padded = moePaddedRow(spec.arch, hidden);
  Value thread = s.globalThread();
  Value token = s.divu(thread, s.idx(chunks)), c = s.remu(thread, s.idx(chunks));
  s.when(s.cmp(P::ult, token, tokenArg.value()), [&] {
    Value a0 = s.add(s.mul(token, s.idx(padded)), s.mul(c, s.idx(8)));
    Value o0 = s.add(s.mul(token, s.idx(hidden / 2)), s.mul(c, s.idx(4)));
    for (int64_t j = 0; j < 4; ++j)
      s.store(s.packBf16(s.load(acc, s.add(a0, s.idx(2 * j))),
                         s.load(acc, s.add(a0, s.idx(2 * j + 1)))),
              out, s.add(o0, s.idx(j)));
  });
  finish(tb, spec);
}

} // namespace

void buildMoeElementwise(ModuleOp module, const KernelSpec &spec) {
  module.getContext()->loadDialect<gpu::GPUDialect, math::MathDialect, memref::MemRefDialect>();
  dsl::TileBuilder tb(module, spec.name());
  if (spec.op == OpKind::MoeReduce)
    buildReduce(tb, spec);
  else if (spec.op == OpKind::MoeCast)
    buildCast(tb, spec);
  else
    buildQuantizers(tb, spec);
}

} // namespace mxfp4
