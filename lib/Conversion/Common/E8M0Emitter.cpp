//===- E8M0Emitter.cpp - Scale rounding as IR -----------------------------===//
//
// Mirrors lib/Format/E8M0.cpp line by line; see docs/Numerics.md.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/E8M0Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mxfp4 {

namespace {
struct I32 {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, int64_t v) { return arith::AddIOp::create(b, loc, x, c(v)); }
  Value andi(Value x, int64_t v) { return arith::AndIOp::create(b, loc, x, c(v)); }
  Value shr(Value x, int64_t v) { return arith::ShRUIOp::create(b, loc, x, c(v)); }
  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(v));
  }
  Value select(Value cond, Value t, Value f) { return arith::SelectOp::create(b, loc, cond, t, f); }
  Value expField(Value bits) { return andi(shr(bits, 23), 0xFF); }
  /// max(e - 2, 0) for e in 0..255.
  Value minusTwoFloored(Value e) {
    Value d = arith::SubIOp::create(b, loc, e, c(2));
    return arith::MaxSIOp::create(b, loc, d, c(0));
  }
};
} // namespace

Value emitScaleFromAmax(OpBuilder &b, Location loc, Value amaxBits, tile::ScaleRoundingKind mode) {
  I32 i{b, loc};
  switch (mode) {
  case tile::ScaleRoundingKind::roundup: {
    // w = bits(amax * fl(1/6)); ceil to a power of two; NaN/Inf keep 0xFF.
    Value amax = arith::BitcastOp::create(b, loc, b.getF32Type(), amaxBits);
    Value sixth = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(llvm::bit_cast<float>(uint32_t(0x3E2AAAAB))));
    Value w = arith::BitcastOp::create(b, loc, b.getI32Type(),
                                       arith::MulFOp::create(b, loc, amax, sixth));
    Value up = i.expField(i.add(w, 0x7FFFFF));
    return i.select(i.eq(i.expField(w), 0xFF), i.c(0xFF), up);
  }
  case tile::ScaleRoundingKind::even: {
    Value e = i.expField(i.andi(i.add(amaxBits, 0x200000), 0xFF800000));
    return i.select(i.eq(e, 0xFF), i.c(254), i.minusTwoFloored(e));
  }
  case tile::ScaleRoundingKind::floor: {
    Value e = i.expField(amaxBits);
    return i.select(i.eq(e, 0xFF), i.c(0xFF), i.minusTwoFloored(e));
  }
  case tile::ScaleRoundingKind::nearest:
    return i.minusTwoFloored(i.expField(i.andi(i.add(amaxBits, 0x400000), 0xFF800000)));
  }
  llvm_unreachable("unknown scale rounding");
}

Value emitDequantScale(OpBuilder &b, Location loc, Value code) {
  I32 i{b, loc};
  Value bits = arith::ShLIOp::create(b, loc, code, i.c(23));
  Value nan = i.c(0x7FC00000);
  bits = i.select(i.eq(code, 0xFF), nan, bits);
  bits = i.select(i.eq(code, 0), i.c(0x00400000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

} // namespace mxfp4
