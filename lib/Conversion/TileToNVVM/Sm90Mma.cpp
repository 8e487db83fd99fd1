//===- Sm90Mma.cpp - Weight dequantization on sm_90a ----------------------===//
//
// Per K step and 128-K chunk, each thread holds for each of its 4 (BM 128:
// 2) weight rows (m16 tile i, half h) 16 contiguous bytes = 32 E2M1 values
// (K 32t..+31 of the chunk) and one dword holding its 4 rows' E8M0 scales
// (sm90-mma16 layouts, read from the TMA stages by Sm90Tma.cpp). MMA step s
// uses word s/2 of the 16 bytes: nibble pairs (2(s%2), 2(s%2)+4) as A regs
// a0/a1 and (2(s%2)+1, 2(s%2)+5) as a2/a3 (Sm90Wgmma.cpp; the K permutation
// of NvLowering.h).
//
// Dequantization of a nibble pair (j, j+4) of a word to a bf16x2 register,
// exactly: the 3 magnitude bits moved to bf16 bits 6-8 and the sign to bit 15
// make each half E2M1 * 2^-126 (code 1 is the bf16 subnormal 2^-127). The
// stored weight words have their bits in the order Format/Sm90WeightBits.h
// chose for that: a mask, a shift and a mask, a rotation and a mask, or two
// shifts under two masks; plain packed nibbles (the MXFP4 activations of
// Sm90LoadMx.cpp) take one mask, one multiply that makes two shifted copies
// and one mask. Then two
// exact bf16x2 multiplies by 2^126 and by 2^(S-127) (S = 0: 2^-127,
// S = 0xFF: NaN) give the scaled value. When every weight scale is below
// 128 (real weights: scales <= 1; known when the weights are prepared) one
// multiply by 2^(S-1) does, bit for bit the same. Both halves of a pair sit
// 16 bits apart, so each operation serves both.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Format/Sm90WeightBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

namespace {
struct I32Ops {
  ImplicitLocOpBuilder &b;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  Value shr(Value x, int64_t n) { return n ? arith::ShRUIOp::create(b, x, c(n)).getResult() : x; }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, x, c(n)); }
  Value band(Value x, int64_t m) { return arith::AndIOp::create(b, x, c(m)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value selEq(Value x, int64_t v, int64_t then, Value otherwise) {
    Value eq = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, c(v));
    return arith::SelectOp::create(b, eq, c(then), otherwise);
  }
};
} // namespace

/// E8M0 byte `which` of `word` as a bf16x2 splat of 2^(S-127), or of
/// 2^(S-1) (exponent field S + 126 <= 253: no special cases) when folded.
Value nv::scalePair(ImplicitLocOpBuilder &b, Value word, Value which, bool folded) {
  I32Ops o{b};
  Value s = o.band(arith::ShRUIOp::create(b, word, arith::ShLIOp::create(b, which, o.c(3))), 0xFF);
  Value bits;
  if (folded) {
    bits = o.shl(arith::AddIOp::create(b, s, o.c(126)), 7);
  } else {
    bits = o.shl(s, 7);
    bits = o.selEq(s, 0, 0x40, bits);      // 2^-127, a bf16 subnormal
    bits = o.selEq(s, 0xFF, 0x7FC0, bits); // NaN
  }
  bits = o.bor(bits, o.shl(bits, 16));
  return LLVM::BitcastOp::create(b, VectorType::get({2}, b.getBF16Type()), bits);
}

/// bf16x2 `bits` holding E2M1 * 2^-126 in each half, times the scale from
/// scalePair (and 2^126 unless `folded`), as i32.
static Value scaleFields(ImplicitLocOpBuilder &b, Value bits, Value scale, bool folded) {
  auto v2 = VectorType::get({2}, b.getBF16Type());
  Value v = LLVM::BitcastOp::create(b, v2, bits);
  if (!folded) {
    Value two126 = arith::ConstantOp::create(
        b, v2, DenseElementsAttr::get(v2, APFloat(APFloat::BFloat(), APInt(16, 0x7E80))));
    v = arith::MulFOp::create(b, v, two126);
  }
  v = arith::MulFOp::create(b, v, scale);
  return LLVM::BitcastOp::create(b, b.getI32Type(), v);
}

/// Nibbles j and j + 4 of `word` (8 E2M1, element 2i in the low nibble of
/// byte i) as bf16x2 bits (element j low), scaled. Nibble j's three magnitude
/// bits move to bf16 bits 6-8 and its sign to bit 15; nibble j + 4 sits 16
/// bits higher, so each operation serves both halves. Folded,
/// the scale holds the 2^126 too: one exact multiply.
Value nv::dequantPair(ImplicitLocOpBuilder &b, Value word, int j, Value scale, bool folded) {
  I32Ops o{b};
  // Nibbles 2 and 3 (6 and 7) first move down to 0 and 1 (4 and 5).
  if (j >= 2) {
    word = o.shr(word, 8);
    j -= 2;
  }
  // The pair's 8 bits times 2^(6-4j) + 2^(12-4j): the copies shifted by
  // 6-4j put the magnitudes at bits 6-8 (22-24), those shifted by 12-4j the
  // signs at bit 15 (31); the copies' bits never overlap, so the product is
  // their OR, and one mask keeps those fields.
  Value pair = o.band(word, int64_t(0x000F000F) << (4 * j));
  Value spread = arith::MulIOp::create(
      b, pair, o.c((int64_t(1) << (6 - 4 * j)) + (int64_t(1) << (12 - 4 * j))));
  return scaleFields(b, o.band(spread, int64_t(kSm90PairFields)), scale, folded);
}

Value nv::dequantWeightPair(ImplicitLocOpBuilder &b, Value word, int j, Value scale, bool folded) {
  // Format/Sm90WeightBits.cpp (sm90WeightPairBits) is the host model.
  I32Ops o{b};
  const int64_t fields = kSm90PairFields;
  Value bits;
  switch (j) {
  case 0:
    bits = o.band(word, fields);
    break;
  case 1:
    bits = o.band(o.shl(word, 4), fields);
    break;
  case 2: // a funnel shift of the word with itself: a rotation (shf.r.wrap)
    bits = o.band(LLVM::FshrOp::create(b, word, word, o.c(6)), fields);
    break;
  default:
    bits = o.bor(o.band(o.shr(word, 2), int64_t(kSm90Pair3Low)),
                 o.band(o.shl(word, 6), int64_t(kSm90Pair3High)));
    break;
  }
  return scaleFields(b, bits, scale, folded);
}

SmallVector<Value> nv::weightFragment(ImplicitLocOpBuilder &b, Value w0, Value w1, int j0,
                                      Value sc0, Value sc1, bool folded) {
  return {dequantWeightPair(b, w0, j0, sc0, folded), dequantWeightPair(b, w1, j0, sc1, folded),
          dequantWeightPair(b, w0, j0 + 1, sc0, folded),
          dequantWeightPair(b, w1, j0 + 1, sc1, folded)};
}
