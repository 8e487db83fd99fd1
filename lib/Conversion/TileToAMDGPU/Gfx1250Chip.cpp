//===- Gfx1250Chip.cpp - gfx1250 in the AMD lowering ----------------------===//
//
// Wave32. The MMA is v_wmma_scale_f32_16x16x128_f8f6f4: lane l holds 64
// E2M1 of row l % 16, K quarters l / 16 and l / 16 + 2, and a dword of that
// row's four K-block scales. Per 128-K step A's four 16-byte K chunks are
// stored c0, c2, c1, c3 in LDS, so a lane's two chunks are one 32-byte
// read; A's scales are one dword per (128-K step, row). FP4 packing
// converts eight elements at once (v_cvt_scalef32_pk8_fp4_bf16).
//
//===----------------------------------------------------------------------===//

#include "AmdChip.h"
#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

namespace {

class Gfx1250Chip final : public AmdChip {
public:
  MmaIntrinsic mma() const override { return MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32; }
  tile::ScaleLayoutKind scaleLayout() const override { return tile::ScaleLayoutKind::gfx1250_wmma; }
  int64_t elemsPerThread(int64_t bm, int64_t bk) const override {
    return std::min<int64_t>(32, bm * bk / 128);
  }
  int64_t aScaleBytes(int64_t bm, int64_t bk) const override { return bm * (bk / 128) * 4; }

  Value packFp4(ImplicitLocOpBuilder &b, Value x, int64_t dw, Value scale) const override {
    Value eight = vector::ExtractStridedSliceOp::create(b, x, ArrayRef<int64_t>{dw * 8},
                                                        ArrayRef<int64_t>{8}, ArrayRef<int64_t>{1});
    return ROCDL::CvtScaleF32Pk8Fp4Bf16Op::create(b, b.getI32Type(), eight, scale);
  }

  std::pair<Value, Value> ldsPlacement(ImplicitLocOpBuilder &b, const Config &cfg, Value r,
                                       Value kb) const override {
    Value sub = idxDiv(b, kb, 4), chunk = idxRem(b, kb, 4);
    Value pos = idxAdd(b, idxMul(b, idxRem(b, chunk, 2), 2), idxDiv(b, chunk, 2));
    Value lcol = idxAdd(b, idxMul(b, sub, 64), idxMul(b, pos, 16));
    // One dword per (128-K step, row); byte = K-block inside the step.
    Value sOff = idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, sub, cfg.bm), r), 4), chunk);
    return {lcol, sOff};
  }

  void emitMma(ImplicitLocOpBuilder &b, const Config &cfg, const MmaOperands &ops,
               SmallVectorImpl<Value> &parts) const override {
    auto i8x16 = VectorType::get({16}, b.getI8Type());
    auto fp4x64 = VectorType::get({64}, b.getType<Float4E2M1FNType>());
    auto accTy = VectorType::get({cfg.accPerLane()}, b.getF32Type());
    for (int64_t s = 0; s < cfg.subSteps(); ++s) {
      Value kc = idxAdd(b, ops.firstStep, s);
      SmallVector<Value> aFrag, aFragScale, bFrag, bFragScale;
      for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt) {
        Value rowOff = idxMul(b, idxAdd(b, ops.l16, mt * 16), cfg.bk / 2);
        Value col = idxAdd(b, idxMul(b, ops.lgroup, 32), s * 64);
        Value v = vector::LoadOp::create(b, VectorType::get({32}, b.getI8Type()), ops.ldsA,
                                         ValueRange{idxAdd(b, ops.stageA, idxAdd(b, rowOff, col))});
        aFrag.push_back(vector::BitCastOp::create(b, fp4x64, v));
        Value so = idxMul(b, idxAdd(b, idxAdd(b, ops.l16, mt * 16), s * cfg.bm), 4);
        aFragScale.push_back(loadScaleDword(b, ops.ldsS, idxAdd(b, ops.stageS, so)));
      }
      for (int64_t j = 0; j < cfg.colTiles(); ++j) {
        Value nt16 = idxDiv(b, idxAdd(b, ops.waveColumn, j * 16), 16);
        Value chunk = idxAdd(b, idxMul(b, nt16, 16 * ops.packedK), idxMul(b, kc, 1024));
        // Lane (row l%16, group h) takes K quarters h and h+2 of the chunk.
        Value o0 = idxAdd(b, chunk, idxAdd(b, idxMul(b, ops.lgroup, 256), idxMul(b, ops.l16, 16)));
        Value v0 = vector::LoadOp::create(b, i8x16, ops.weights, ValueRange{o0});
        Value v1 = vector::LoadOp::create(b, i8x16, ops.weights, ValueRange{idxAdd(b, o0, 512)});
        SmallVector<int64_t> mask = llvm::to_vector(llvm::seq<int64_t>(0, 32));
        Value v = vector::ShuffleOp::create(b, v0, v1, mask);
        bFrag.push_back(vector::BitCastOp::create(b, fp4x64, v));
        Value ncol = idxAdd(b, idxAdd(b, ops.waveColumn, j * 16), ops.l16);
        Value so = idxAdd(b, idxMul(b, idxDiv(b, ncol, 32), ops.scaleGroupBytes),
                          idxAdd(b, idxMul(b, kc, 128), idxMul(b, idxRem(b, ncol, 32), 4)));
        bFragScale.push_back(loadScaleDword(b, ops.scales, so));
      }
      for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
        for (int64_t j = 0; j < cfg.colTiles(); ++j) {
          Value &c = parts[mt * cfg.colTiles() + j];
          c = amdgpu::ScaledWMMAOp::create(b, accTy, 16, 16, 128, aFrag[mt], bFrag[j], c,
                                           aFragScale[mt], 0, bFragScale[j], 0);
        }
    }
  }
};

} // namespace

namespace mxfp4::amd {
const AmdChip &gfx1250Chip() {
  static const Gfx1250Chip chip;
  return chip;
}
} // namespace mxfp4::amd
