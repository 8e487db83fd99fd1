//===- MoeElementwise.cpp - The MoE elementwise kernels (SIMT) ------------===//

#include "mxfp4/Kernels/MoeElementwise.h"
#include "SimtEmitter.h"
#include "mxfp4/Conversion/E8M0Emitter.h"
#include "mxfp4/DSL/TileBuilder.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace mxfp4 {

namespace {

class ElementwiseEmitter : public SimtEmitter {
public:
  using SimtEmitter::SimtEmitter;

  Value f64(double v) { return arith::ConstantFloatOp::create(b, b.getF64Type(), APFloat(v)); }
  Value bitsToF32(Value i) { return arith::BitcastOp::create(b, b.getF32Type(), i); }
  Value f32ToBits(Value f) { return arith::BitcastOp::create(b, b.getI32Type(), f); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value fmin(Value x, Value y) { return arith::MinimumFOp::create(b, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, x, i32(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, x, i32(n)); }
  Value andi(Value x, int64_t m) { return arith::AndIOp::create(b, x, i32(m)); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }

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

  /// An approximate quotient (arith `afn`: the target's reciprocal-based
  /// division, a few ulp): the activations' quotients feed a 4-bit
  /// quantizer, and IEEE division was most of moe_actq's instructions.
  Value fdivApprox(Value x, Value y) {
    return arith::DivFOp::create(b, x, y, arith::FastMathFlags::afn);
  }
  /// exp(x) = 2^(x log2 e) by the target's exp2 instruction (math.exp2
  /// `afn`), x clamped to [-87, 88] so neither side leaves the normal
  /// range: a relative error of a few ulp plus |x| ulp from the product.
  Value exp(Value x) {
    x = fmax(fmin(x, f32(88.0f)), f32(-87.0f));
    return math::Exp2Op::create(b, fmul(x, f32(1.44269504088896341f)), arith::FastMathFlags::afn);
  }
  Value sigmoid(Value x) {
    return fdivApprox(f32(1.0f), fadd(f32(1.0f), exp(arith::NegFOp::create(b, x))));
  }
  /// tanh(x) = 1 - 2 / (exp(2x) + 1).
  Value tanh(Value x) {
    return fsub(f32(1.0f), fdivApprox(f32(2.0f), fadd(exp(fmul(x, f32(2.0f))), f32(1.0f))));
  }
  /// The gated activations of Dialect/Tile (mxtile.activation), in f32,
  /// with run-time parameters p0, p1 and their reciprocals r0, r1 (SiTUv2
  /// divides by its betas).
  Value activation(Activation kind, Value g, Value u, Value p0, Value p1, Value r0, Value r1) {
    switch (kind) {
    case Activation::Silu:
      return fmul(fmul(g, sigmoid(g)), u);
    case Activation::Swiglu: { // p0 = alpha, p1 = limit
      Value gc = fmin(g, p1);
      Value uc = fmax(fmin(u, p1), arith::NegFOp::create(b, p1));
      return fmul(fmul(gc, sigmoid(fmul(gc, p0))), fadd(uc, f32(1.0f)));
    }
    case Activation::Situv2: { // p0 = beta, p1 = linear_beta
      Value sg = fmul(fmul(p0, tanh(fmul(g, r0))), sigmoid(g));
      return fmul(sg, fmul(p1, tanh(fmul(u, r1))));
    }
    case Activation::None:
      break;
    }
    return g;
  }

  /// One 32-element block quantized as the CPU quantizer does
  /// (Format/Quantize.h, quantizeBlock): its 4 code words and its scale.
  std::pair<SmallVector<Value>, Value> quantizeBlock(ArrayRef<Value> x, ScaleRounding mode) {
    SmallVector<Value> bits;
    Value amax = i32(0);
    for (Value v : x) {
      bits.push_back(f32ToBits(v));
      amax = arith::MaxUIOp::create(b, amax, andi(bits.back(), 0x7FFFFFFF));
    }
    Value scale = emitScaleFromAmax(b, b.getLoc(), amax, tile::toTile(mode));
    Value nan = cmp(P::eq, scale, i32(0xFF));
    // encodeE2M1 (Format/E2M1.cpp) compares |x| / 2^(scale - 127) with its
    // thresholds, ties to the even code. Each threshold times 2^(scale -
    // 127) is an exact f32 (a multiple of 2^-2 times a power of two in
    // [2^-127, 2^127]; normal or subnormal) or past the f32 range (below),
    // and the bits of non-negative
    // floats order as the floats do, subnormals included: so |x|'s bits
    // against the scaled thresholds' bits, once per block in f64, give the
    // CPU quantizer's codes with integer compares.
    struct Threshold {
      double at;
      bool inclusive; // a >= at (tie up) rather than a > at
    };
    const Threshold thresholds[] = {{0.25, false}, {0.75, true}, {1.25, false}, {1.75, true},
                                    {2.5, false},  {3.5, true},  {5.0, false}};
    Value exp64 = arith::ExtUIOp::create(b, b.getI64Type(), add(scale, i32(1023 - 127)));
    Value pow2 = arith::BitcastOp::create(
        b, b.getF64Type(),
        arith::ShLIOp::create(b, exp64, arith::ConstantIntOp::create(b, b.getI64Type(), 52)));
    // Past the f32 range (scale 254, an Inf amax in the even mode) a
    // threshold is Inf: only Inf is above it, so a strict one compares
    // against the largest finite f32 instead.
    SmallVector<Value> limits;
    for (const Threshold &th : thresholds) {
      Value limit = f32ToBits(arith::TruncFOp::create(b, b.getF32Type(), fmul(f64(th.at), pow2)));
      limits.push_back(th.inclusive ? limit : arith::MinUIOp::create(b, limit, i32(0x7F7FFFFF)));
    }
    SmallVector<Value> words;
    for (int64_t w = 0; w < 4; ++w) {
      Value word = i32(0);
      for (int64_t e = 0; e < 8; ++e) {
        Value xb = bits[size_t(8 * w + e)];
        Value a = andi(xb, 0x7FFFFFFF);
        Value mag = i32(0);
        for (size_t t = 0; t < std::size(thresholds); ++t)
          mag = add(mag, zext(cmp(thresholds[t].inclusive ? P::uge : P::ugt, a, limits[t])));
        // A NaN element keeps only its sign (its bits are above every
        // threshold's).
        mag = select(cmp(P::ugt, a, i32(0x7F800000)), i32(0), mag);
        Value code = ori(shl(shr(xb, 31), 3), mag);
        code = select(nan, i32(0), code);
        word = ori(word, shl(code, 4 * e));
      }
      words.push_back(word);
    }
    return {words, scale};
  }

  /// Stores a block's code words and scale at block `blk` (index) of the
  /// row-major outputs.
  void storeBlock(ArrayRef<Value> words, Value scale, Value codes, Value scales, Value blk) {
    for (int64_t w = 0; w < 4; ++w)
      store(words[size_t(w)], codes, add(mul(blk, idx(4)), idx(w)));
    store(arith::TruncIOp::create(b, b.getI8Type(), scale), scales, blk);
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
  Value p0, p1, doweight, writeDebug, tokens;
  if (act) {
    p0 = tb.f32Arg();
    p1 = tb.f32Arg();
    doweight = rawI32(tb.i32Arg());
    writeDebug = rawI32(tb.i32Arg());
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
  auto storeZeros = [&] {
    SmallVector<Value> zeros(4, s.i32(0));
    s.storeBlock(zeros, s.i32(0x7F), codes, scales, blk);
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
        s.storeBlock(words, scale, codes, scales, blk);
      });
      s.when(arith::AndIOp::create(b, s.cmp(P::uge, token, tokens), inRow), storeZeros);
      return;
    }
    s.when(inRow, [&] {
      // gate: words [row * padded + kb * 16, +16) of the [rows, 2 padded]
      // input, up: padded / 2 words later.
      const int64_t inter = spec.k;
      Value w0 = s.add(s.mul(row, s.idx(padded)), s.mul(kb, s.idx(16)));
      SmallVector<Value> g = s.loadBf16Block(input, w0);
      SmallVector<Value> u = s.loadBf16Block(input, s.add(w0, s.idx(padded / 2)));
      Value w = s.select(s.cmp(P::ne, doweight, s.i32(0)), s.load(rowsInfo, row), s.f32(1.0f));
      Value r0 = s.fdiv(s.f32(1.0f), p0), r1 = s.fdiv(s.f32(1.0f), p1);
      SmallVector<Value> a;
      for (size_t j = 0; j < 32; ++j)
        a.push_back(
            s.activation(spec.activation, s.fmul(g[j], w), s.fmul(u[j], w), p0, p1, r0, r1));
      s.when(s.cmp(P::ne, writeDebug, s.i32(0)), [&] {
        Value d0 = s.add(s.mul(row, s.idx(inter)), s.mul(kb, s.idx(32)));
        for (size_t j = 0; j < 32; ++j)
          s.store(a[j], debug, s.add(d0, s.idx(int64_t(j))));
      });
      auto [words, scale] = s.quantizeBlock(a, spec.rounding);
      s.storeBlock(words, scale, codes, scales, blk);
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
  dsl::Index tokenArg = tb.i32Arg();
  Value useWeights = rawI32(tb.i32Arg());
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
    SmallVector<Value> acc(8, s.f32(0.0f));
    for (int64_t j = 0; j < topk; ++j)
      for (int64_t q = 0; q < 4; ++q) {
        Value word = words[size_t(4 * j + q)];
        Value lo = s.bitsToF32(s.shl(word, 16));
        Value hi = s.bitsToF32(arith::AndIOp::create(b, word, s.i32(int64_t(0xFFFF0000u))));
        for (auto [at, v] : {std::pair{2 * q, lo}, std::pair{2 * q + 1, hi}}) {
          Value &a = acc[size_t(at)];
          a = s.select(live[size_t(j)], s.fadd(a, s.fmul(w[size_t(j)], v)), a);
        }
      }
    Value o0 = s.add(s.mul(token, s.idx(hidden / 2)), s.mul(c, s.idx(4)));
    for (int64_t j = 0; j < 4; ++j) {
      auto bf16Bits = [&](Value v) {
        Value h = arith::TruncFOp::create(b, b.getBF16Type(), v);
        return arith::ExtUIOp::create(b, i32, arith::BitcastOp::create(b, b.getI16Type(), h))
            .getResult();
      };
      Value word = s.ori(bf16Bits(acc[size_t(2 * j)]), s.shl(bf16Bits(acc[size_t(2 * j + 1)]), 16));
      s.store(word, out, s.add(o0, s.idx(j)));
    }
  });
  finish(tb, spec);
}

} // namespace

void buildMoeElementwise(ModuleOp module, const KernelSpec &spec) {
  module.getContext()->loadDialect<gpu::GPUDialect, math::MathDialect, memref::MemRefDialect>();
  dsl::TileBuilder tb(module, spec.name());
  if (spec.op == OpKind::MoeReduce)
    buildReduce(tb, spec);
  else
    buildQuantizers(tb, spec);
}

} // namespace mxfp4
