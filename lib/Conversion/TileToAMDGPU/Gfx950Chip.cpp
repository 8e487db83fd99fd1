//===- Gfx950Chip.cpp - gfx950 (MI355X) in the AMD lowering ---------------===//
//
// Wave64. The MMA is v_mfma_scale_f32_16x16x128_f8f6f4: lane l holds 32
// E2M1 of row l % 16 at K 32 (l / 16) .., and one scale dword whose byte is
// picked by opsel, so one dword serves two row tiles and two K steps
// (semantics.md 3.2: dword = MFMA lane, byte = 2 * K step + row / 16). A is
// row-major in LDS; each lane's 16-byte operand is contiguous. FP4 packing
// converts pairs (v_cvt_scalef32_pk_fp4_bf16) into the four bytes of a word.
//
//===----------------------------------------------------------------------===//

#include "AmdChip.h"
#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

namespace {

class Gfx950Chip final : public AmdChip {
public:
  MmaIntrinsic mma() const override { return MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32; }
  tile::ScaleLayoutKind scaleLayout() const override {
    return tile::ScaleLayoutKind::gfx950_mfma16;
  }
  int64_t elemsPerThread(int64_t bm, int64_t bk) const override {
    return std::min<int64_t>(16, bm * bk / 256);
  }
  int64_t aScaleBytes(int64_t bm, int64_t) const override {
    return std::max<int64_t>(1, bm / 32) * 256;
  }

  Value packFp4(ImplicitLocOpBuilder &b, Value x, int64_t dw, Value scale) const override {
    auto fp4x8 = VectorType::get({8}, b.getType<Float4E2M1FNType>());
    Value packed;
    for (int64_t pair = 0; pair < 4; ++pair) {
      Value two = vector::ExtractStridedSliceOp::create(b, x, ArrayRef<int64_t>{dw * 8 + 2 * pair},
                                                        ArrayRef<int64_t>{2}, ArrayRef<int64_t>{1});
      packed = amdgpu::PackedScaledTruncOp::create(b, fp4x8, two, scale, b.getI32IntegerAttr(pair),
                                                   packed);
    }
    Value v = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), packed);
    return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{0});
  }

  std::pair<Value, Value> ldsPlacement(ImplicitLocOpBuilder &b, const Config &, Value r,
                                       Value kb) const override {
    Value lcol = idxMul(b, kb, 16);
    // semantics.md 3.2 convention: dword = MFMA lane, byte = 2 * K-step + row / 16.
    Value sOff = idxAdd(b, idxMul(b, idxDiv(b, r, 32), 256), idxMul(b, idxRem(b, kb, 4), 64));
    sOff = idxAdd(b, sOff, idxMul(b, idxRem(b, r, 16), 4));
    sOff = idxAdd(b, sOff, idxMul(b, idxDiv(b, kb, 4), 2));
    sOff = idxAdd(b, sOff, idxDiv(b, idxRem(b, r, 32), 16));
    return {lcol, sOff};
  }

  void emitMma(ImplicitLocOpBuilder &b, const Config &cfg, const MmaOperands &ops,
               SmallVectorImpl<Value> &parts) const override {
    auto i8x4 = VectorType::get({4}, b.getI8Type());
    auto scaleVec = VectorType::get({4}, b.getType<Float8E8M0FNUType>());
    // Scale dwords: B from global (one per 32-column pair), A from LDS.
    SmallVector<Value> bScale, aScale;
    Value sk = idxAdd(b, idxMul(b, idxDiv(b, ops.scaleBlock, 8), 256), idxMul(b, ops.lane, 4));
    for (int64_t jp = 0; jp < cfg.colTiles() / 2; ++jp) {
      Value row32 = idxDiv(b, idxAdd(b, ops.waveColumn, jp * 32), 32);
      Value off = idxAdd(b, idxMul(b, row32, ops.scaleGroupBytes), sk);
      Value v = vector::LoadOp::create(b, i8x4, ops.scales, ValueRange{off});
      if (cfg.subSteps() == 1) {
        // BK = 128 covers half of a dword's two K-steps: shift the odd step's
        // bytes down so opsel stays a constant (it must be an immediate).
        auto i32x1 = VectorType::get({1}, b.getI32Type());
        Value word = vector::ExtractOp::create(b, vector::BitCastOp::create(b, i32x1, v),
                                               ArrayRef<int64_t>{0});
        Value odd = arith::IndexCastOp::create(b, b.getI32Type(),
                                               idxRem(b, idxDiv(b, ops.scaleBlock, 4), 2));
        Value shift = arith::MulIOp::create(b, odd, arith::ConstantIntOp::create(b, 16, 32));
        word = arith::ShRUIOp::create(b, word, shift);
        v = vector::BitCastOp::create(b, i8x4, vector::BroadcastOp::create(b, i32x1, word));
      }
      bScale.push_back(arith::BitcastOp::create(b, scaleVec, v));
    }
    for (int64_t mp = 0; mp < (cfg.rowTiles() + 1) / 2; ++mp)
      aScale.push_back(loadScaleDword(
          b, ops.ldsS, idxAdd(b, ops.stageS, idxAdd(b, idxMul(b, ops.lane, 4), mp * 256))));

    auto i8x16 = VectorType::get({16}, b.getI8Type());
    auto fp4x32 = VectorType::get({32}, b.getType<Float4E2M1FNType>());
    auto accTy = VectorType::get({cfg.accPerLane()}, b.getF32Type());
    for (int64_t s = 0; s < cfg.subSteps(); ++s) {
      Value kc = idxAdd(b, ops.firstStep, s);
      SmallVector<Value> aFrag, bFrag;
      for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt) {
        Value rowOff = idxMul(b, idxAdd(b, ops.l16, mt * 16), cfg.bk / 2);
        Value col = idxAdd(b, idxMul(b, ops.lgroup, 16), s * 64);
        Value v = vector::LoadOp::create(b, i8x16, ops.ldsA,
                                         ValueRange{idxAdd(b, ops.stageA, idxAdd(b, rowOff, col))});
        aFrag.push_back(vector::BitCastOp::create(b, fp4x32, v));
      }
      for (int64_t j = 0; j < cfg.colTiles(); ++j) {
        Value nt16 = idxDiv(b, idxAdd(b, ops.waveColumn, j * 16), 16);
        Value chunk = idxAdd(b, idxMul(b, nt16, 16 * ops.packedK), idxMul(b, kc, 1024));
        Value v = vector::LoadOp::create(b, i8x16, ops.weights,
                                         ValueRange{idxAdd(b, chunk, idxMul(b, ops.lane, 16))});
        bFrag.push_back(vector::BitCastOp::create(b, fp4x32, v));
      }
      for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
        for (int64_t j = 0; j < cfg.colTiles(); ++j) {
          Value &c = parts[mt * cfg.colTiles() + j];
          uint32_t ia = uint32_t(2 * s + mt % 2);
          uint32_t ib = uint32_t((cfg.subSteps() == 2 ? 2 * s : 0) + j % 2);
          c = amdgpu::ScaledMFMAOp::create(b, accTy, 16, 16, 128, aFrag[mt], bFrag[j], c,
                                           aScale[mt / 2], bScale[j / 2], ia, ib);
        }
    }
  }
};

} // namespace

namespace mxfp4::amd {
const AmdChip &gfx950Chip() {
  static const Gfx950Chip chip;
  return chip;
}
} // namespace mxfp4::amd
