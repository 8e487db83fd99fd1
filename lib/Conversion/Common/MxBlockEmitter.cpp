//===- MxBlockEmitter.cpp - MoE activations and block quantization --------===//

#include "mxfp4/Conversion/MxBlockEmitter.h"
#include "mxfp4/Conversion/E8M0Emitter.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace mxfp4 {

namespace {

using P = arith::CmpIPredicate;

struct Scalar {
  ImplicitLocOpBuilder &b;
  Value f32(float v) { return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(v)); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, b.getI32Type(), v); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fmin(Value x, Value y) { return arith::MinimumFOp::create(b, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  Value andi(Value x, int64_t m) { return arith::AndIOp::create(b, x, i32(m)); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, x, i32(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, x, i32(n)); }
  Value cmp(P p, Value x, Value y) { return arith::CmpIOp::create(b, p, x, y); }
  Value zext(Value c) { return arith::ExtUIOp::create(b, b.getI32Type(), c); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, c, x, y); }
  Value bits(Value f) { return arith::BitcastOp::create(b, b.getI32Type(), f); }

  /// An approximate quotient (arith `afn`: the target's reciprocal-based
  /// division, a few ulp): IEEE division was most of moe_actq's
  /// instructions.
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, x, y, arith::FastMathFlags::afn); }
  /// exp(x) = 2^(x log2 e) by the target's exp2 instruction (math.exp2
  /// `afn`), x clamped to [-87, 88] so neither side leaves the normal
  /// range: a relative error of a few ulp plus |x| ulp from the product.
  Value exp(Value x) {
    x = fmax(fmin(x, f32(88.0f)), f32(-87.0f));
    return math::Exp2Op::create(b, fmul(x, f32(1.44269504088896341f)), arith::FastMathFlags::afn);
  }
  Value sigmoid(Value x) {
    return fdiv(f32(1.0f), fadd(f32(1.0f), exp(arith::NegFOp::create(b, x))));
  }
  /// tanh(x) = 1 - 2 / (exp(2x) + 1).
  Value tanh(Value x) {
    return fsub(f32(1.0f), fdiv(f32(2.0f), fadd(exp(fmul(x, f32(2.0f))), f32(1.0f))));
  }
};

} // namespace

GatedParams emitGatedParams(ImplicitLocOpBuilder &b, Value p0, Value p1) {
  Value one = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(1.0f));
  return {p0, p1, arith::DivFOp::create(b, one, p0), arith::DivFOp::create(b, one, p1)};
}

Value emitGatedActivation(ImplicitLocOpBuilder &b, tile::ActivationKind kind, Value g, Value u,
                          const GatedParams &p) {
  Scalar s{b};
  switch (kind) {
  case tile::ActivationKind::silu:
    return s.fmul(s.fmul(g, s.sigmoid(g)), u);
  case tile::ActivationKind::swiglu: { // p0 = alpha, p1 = limit
    Value gc = s.fmin(g, p.p1);
    Value uc = s.fmax(s.fmin(u, p.p1), arith::NegFOp::create(b, p.p1));
    return s.fmul(s.fmul(gc, s.sigmoid(s.fmul(gc, p.p0))), s.fadd(uc, s.f32(1.0f)));
  }
  case tile::ActivationKind::situv2: { // p0 = beta, p1 = linear_beta
    Value sg = s.fmul(s.fmul(p.p0, s.tanh(s.fmul(g, p.r0))), s.sigmoid(g));
    return s.fmul(sg, s.fmul(p.p1, s.tanh(s.fmul(u, p.r1))));
  }
  case tile::ActivationKind::none:
    break;
  }
  return g;
}

std::pair<SmallVector<Value, 4>, Value>
emitQuantizeBlock(ImplicitLocOpBuilder &b, ArrayRef<Value> x, tile::ScaleRoundingKind mode) {
  Scalar s{b};
  SmallVector<Value> bits;
  Value amax = s.i32(0);
  for (Value v : x) {
    bits.push_back(s.bits(v));
    amax = arith::MaxUIOp::create(b, amax, s.andi(bits.back(), 0x7FFFFFFF));
  }
  Value scale = emitScaleFromAmax(b, b.getLoc(), amax, mode);
  Value nan = s.cmp(P::eq, scale, s.i32(0xFF));
  // encodeE2M1 (Format/E2M1.cpp) compares |x| / 2^(scale - 127) with its
  // thresholds, ties to the even code. Each threshold times 2^(scale -
  // 127) is an exact f32 (a multiple of 2^-2 times a power of two in
  // [2^-127, 2^127]; normal or subnormal) or past the f32 range (below),
  // and the bits of non-negative floats order as the floats do, subnormals
  // included: so |x|'s bits against the scaled thresholds' bits, once per
  // block in f64, give the CPU quantizer's codes with integer compares.
  struct Threshold {
    double at;
    bool inclusive; // a >= at (tie up) rather than a > at
  };
  const Threshold thresholds[] = {{0.25, false}, {0.75, true}, {1.25, false}, {1.75, true},
                                  {2.5, false},  {3.5, true},  {5.0, false}};
  Value exp64 =
      arith::ExtUIOp::create(b, b.getI64Type(), arith::AddIOp::create(b, scale, s.i32(1023 - 127)));
  Value pow2 = arith::BitcastOp::create(
      b, b.getF64Type(),
      arith::ShLIOp::create(b, exp64, arith::ConstantIntOp::create(b, b.getI64Type(), 52)));
  // Past the f32 range (scale 254, an Inf amax in the even mode) a
  // threshold is Inf: only Inf is above it, so a strict one compares
  // against the largest finite f32 instead.
  SmallVector<Value> limits;
  for (const Threshold &th : thresholds) {
    Value at = arith::ConstantFloatOp::create(b, b.getF64Type(), APFloat(th.at));
    Value limit =
        s.bits(arith::TruncFOp::create(b, b.getF32Type(), arith::MulFOp::create(b, at, pow2)));
    limits.push_back(
        th.inclusive ? limit : arith::MinUIOp::create(b, limit, s.i32(0x7F7FFFFF)).getResult());
  }
  SmallVector<Value, 4> words;
  for (size_t w = 0; w < x.size() / 8; ++w) {
    Value word = s.i32(0);
    for (size_t e = 0; e < 8; ++e) {
      Value xb = bits[8 * w + e];
      Value a = s.andi(xb, 0x7FFFFFFF);
      Value mag = s.i32(0);
      for (size_t t = 0; t < std::size(thresholds); ++t)
        mag = arith::AddIOp::create(
            b, mag, s.zext(s.cmp(thresholds[t].inclusive ? P::uge : P::ugt, a, limits[t])));
      // A NaN element keeps only its sign (its bits are above every
      // threshold's).
      mag = s.select(s.cmp(P::ugt, a, s.i32(0x7F800000)), s.i32(0), mag);
      Value code = s.ori(s.shl(s.shr(xb, 31), 3), mag);
      code = s.select(nan, s.i32(0), code);
      word = s.ori(word, s.shl(code, int64_t(4 * e)));
    }
    words.push_back(word);
  }
  return {words, scale};
}

Value emitMoeScaleOffset(ImplicitLocOpBuilder &b, int64_t rep, Value kBlocks, Value row, Value kb) {
  if (rep == 1)
    return idxAdd(b, idxMul(b, row, kBlocks), kb);
  // 4 ((16 t + l) (K/128) R + (kb/4) R + w) + kb % 4 for row r = 16 R t +
  // 16 w + l: the dword of a row's 4 scales of a 128-K step, the R row
  // blocks of a tile side by side per step.
  const int64_t tileRows = 16 * rep;
  Value t = idxDiv(b, row, tileRows), w = idxDiv(b, idxRem(b, row, tileRows), 16);
  Value storageRow = idxAdd(b, idxMul(b, t, 16), idxRem(b, row, 16));
  Value steps = idxDiv(b, kBlocks, 4);
  Value dword = idxAdd(b, idxMul(b, idxMul(b, storageRow, steps), rep),
                       idxAdd(b, idxMul(b, idxDiv(b, kb, 4), rep), w));
  return idxAdd(b, idxMul(b, dword, 4), idxRem(b, kb, 4));
}

ActMxOperands mapActMxOperands(ImplicitLocOpBuilder &b, tile::StoreActMxOp op,
                               const IRMapping &mapping) {
  ActMxOperands o;
  o.op = op;
  o.row0 = mapping.lookup(op.getRow());
  o.col0 = mapping.lookup(op.getCol());
  o.ld = mapping.lookup(op.getLd());
  o.cols = mapping.lookup(op.getCols());
  o.valid = mapping.lookup(op.getValidRows());
  o.scales = mapping.lookup(op.getScales());
  o.debug = op.getDebug() ? mapping.lookup(op.getDebug()) : Value();
  o.params = emitGatedParams(b, mapping.lookup(op.getP0()), mapping.lookup(op.getP1()));
  o.rowWeights = mapping.lookup(op.getRowWeights());
  o.useWeights = arith::CmpIOp::create(b, P::ne, mapping.lookup(op.getDoweight()),
                                       arith::ConstantIntOp::create(b, b.getI32Type(), 0));
  o.one = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(1.0f));
  return o;
}

Value ActMxOperands::rowWeight(ImplicitLocOpBuilder &b, Value row, Value lastRow) const {
  Value w = memref::LoadOp::create(
      b, rowWeights, ValueRange{idxAdd(b, row0, arith::MinUIOp::create(b, row, lastRow))});
  return arith::SelectOp::create(b, useWeights, w, one);
}

Value emitActMxUnit(ImplicitLocOpBuilder &b, const ActMxOperands &ops, ArrayRef<Value> x, Value row,
                    Value column) {
  tile::StoreActMxOp op = ops.op;
  Value ld = ops.ld, cols = ops.cols, scales = ops.scales, debug = ops.debug;
  IntegerType i32 = b.getI32Type();
  Value real = arith::CmpIOp::create(b, P::ult, column, cols);
  auto [words, scale] = emitQuantizeBlock(b, x, op.getRounding());
  Value zero = arith::ConstantIntOp::create(b, i32, 0);
  SmallVector<Value> packed;
  for (Value word : words)
    packed.push_back(arith::SelectOp::create(b, real, word, zero));
  scale = arith::SelectOp::create(b, real, scale, arith::ConstantIntOp::create(b, i32, 0x7F));
  Value scaleAt =
      emitMoeScaleOffset(b, op.getScaleRep(), idxDiv(b, ld, 32), row, idxDiv(b, column, 32));
  memref::StoreOp::create(b, arith::TruncIOp::create(b, b.getI8Type(), scale), scales,
                          ValueRange{scaleAt});
  if (debug) {
    auto inReal = scf::IfOp::create(b, real, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inReal.thenBlock());
    Value d0 = idxAdd(b, idxMul(b, row, cols), column);
    for (int64_t e = 0; e < 32; ++e)
      memref::StoreOp::create(b, x[size_t(e)], debug, ValueRange{idxAdd(b, d0, e)});
  }
  return vector::FromElementsOp::create(b, VectorType::get({4}, i32), packed);
}

} // namespace mxfp4
