//===- AmdMma.cpp - Scaled MMA, activation and store on AMD ---------------===//
//
// Wave w owns output columns n0 + 64w .. +63 (colTiles() MMA tiles) and all
// BM rows (rowTiles() MMA tiles). Per 128-K step each lane reads its A operand
// from LDS, its B operand straight from global memory in the preshuffled
// weight layout (16-byte loads: lane l of a 1024-byte chunk is row l%16, K
// quarter l/16), and the scale dwords; the MMA picks scale bytes by opsel
// (gfx950) or takes the four K-block scales of a row (gfx1250). Lane
// mappings follow Conversion/LaneLayout.h.
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/ActivationEmitter.h"

#include "mxfp4/Format/Layout.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

/// Bytes per row-group of 32 in the padded scale storage of `layout`.
static int64_t scaleGroupBytes(tile::ScaleLayoutKind layout, int64_t k) {
  ScaleLayout l = layout == tile::ScaleLayoutKind::gfx950_mfma16 ? ScaleLayout::Gfx950Mfma16
                                                                 : ScaleLayout::Gfx1250Wmma;
  return 32 * scaleStorageShape(l, 32, k / 32).cols;
}

LogicalResult KernelEmitter::lowerScaledMma(ImplicitLocOpBuilder &b, tile::ScaledMmaOp op) {
  PendingWeight *w = handle<PendingWeight>(op.getB());
  PendingScales *ws = handle<PendingScales>(op.getBScales());
  Accumulator *acc = handle<Accumulator>(op.getAcc());
  if (!handle<LdsData>(op.getA()) || !handle<LdsScales>(op.getAScales()))
    return op.emitOpError() << "on " << cfg.chip << " A and its scales must come from mxtile.quantize";
  if (!w || !ws)
    return op.emitOpError() << "on " << cfg.chip
                            << " B and its scales must come from mxtile.load_weight / load_scales";
  if (!acc)
    return op.emitOpError() << "accumulator must come from mxtile.zero, scaled_mma or the K loop";
  if (w->op.getLayout() != tile::WeightLayoutKind::gfx950_mfma16)
    return op.emitOpError() << "on " << cfg.chip << " weights must use the gfx950_mfma16 layout";
  tile::ScaleLayoutKind want = cfg.isGfx950() ? tile::ScaleLayoutKind::gfx950_mfma16
                                              : tile::ScaleLayoutKind::gfx1250_wmma;
  if (ws->op.getLayout() != want)
    return op.emitOpError() << "on " << cfg.chip << " weight scales must use the "
                            << tile::stringifyScaleLayoutKind(want) << " layout";

  const int64_t kTotal = w->op.getK(), kbPacked = kTotal / 2;
  Value wBase = mapping.lookup(w->op.getBase()), sBase = mapping.lookup(ws->op.getBase());
  Value n0 = mapping.lookup(w->op.getRow()), k0 = mapping.lookup(w->op.getCol());
  Value nw = idxAdd(b, n0, idxMul(b, wave, cfg.colTiles() * 16)); // this wave's first column
  Value kc0 = idxDiv(b, k0, 128);                                // first global 128-K step
  const int64_t groupBytes = scaleGroupBytes(ws->op.getLayout(), kTotal);
  auto i8x4 = VectorType::get({4}, b.getI8Type());
  auto scaleVec = VectorType::get({4}, b.getType<Float8E8M0FNUType>());
  auto loadScaleDword = [&](Value mem, Value offset) -> Value {
    Value v = vector::LoadOp::create(b, i8x4, mem, ValueRange{offset});
    return arith::BitcastOp::create(b, scaleVec, v);
  };

  // gfx950 scale dwords: B from global (one per 32-column pair), A from LDS.
  SmallVector<Value> bScale, aScale;
  if (cfg.isGfx950()) {
    Value kb0 = mapping.lookup(ws->op.getKblock());
    Value sk = idxAdd(b, idxMul(b, idxDiv(b, kb0, 8), 256), idxMul(b, lane, 4));
    for (int64_t jp = 0; jp < cfg.colTiles() / 2; ++jp) {
      Value row32 = idxDiv(b, idxAdd(b, nw, jp * 32), 32);
      Value off = idxAdd(b, idxMul(b, row32, groupBytes), sk);
      Value v = vector::LoadOp::create(b, i8x4, sBase, ValueRange{off});
      if (cfg.subSteps() == 1) {
        // BK = 128 covers half of a dword's two K-steps: shift the odd step's
        // bytes down so opsel stays a constant (it must be an immediate).
        auto i32x1 = VectorType::get({1}, b.getI32Type());
        Value word = vector::ExtractOp::create(b, vector::BitCastOp::create(b, i32x1, v),
                                               ArrayRef<int64_t>{0});
        Value odd = arith::IndexCastOp::create(b, b.getI32Type(), idxRem(b, idxDiv(b, kb0, 4), 2));
        Value shift = arith::MulIOp::create(b, odd, arith::ConstantIntOp::create(b, 16, 32));
        word = arith::ShRUIOp::create(b, word, shift);
        v = vector::BitCastOp::create(b, i8x4, vector::BroadcastOp::create(b, i32x1, word));
      }
      bScale.push_back(arith::BitcastOp::create(b, scaleVec, v));
    }
    for (int64_t mp = 0; mp < (cfg.rowTiles() + 1) / 2; ++mp)
      aScale.push_back(loadScaleDword(ldsS, idxAdd(b, stageS, idxAdd(b, idxMul(b, lane, 4), mp * 256))));
  }

  SmallVector<Value> parts = acc->parts;
  for (int64_t s = 0; s < cfg.subSteps(); ++s) {
    Value kc = idxAdd(b, kc0, s);
    SmallVector<Value> aFrag, aFragScale, bFrag, bFragScale;
    for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt) {
      Value rowOff = idxMul(b, idxAdd(b, l16, mt * 16), cfg.bk / 2);
      if (cfg.isGfx950()) {
        Value col = idxAdd(b, idxMul(b, lgroup, 16), s * 64);
        Value v = vector::LoadOp::create(b, VectorType::get({16}, b.getI8Type()), ldsA,
                                         ValueRange{idxAdd(b, stageA, idxAdd(b, rowOff, col))});
        aFrag.push_back(vector::BitCastOp::create(
            b, VectorType::get({32}, b.getType<Float4E2M1FNType>()), v));
      } else {
        Value col = idxAdd(b, idxMul(b, lgroup, 32), s * 64);
        Value v = vector::LoadOp::create(b, VectorType::get({32}, b.getI8Type()), ldsA,
                                         ValueRange{idxAdd(b, stageA, idxAdd(b, rowOff, col))});
        aFrag.push_back(vector::BitCastOp::create(
            b, VectorType::get({64}, b.getType<Float4E2M1FNType>()), v));
        Value so = idxMul(b, idxAdd(b, idxAdd(b, l16, mt * 16), s * cfg.bm), 4);
        aFragScale.push_back(loadScaleDword(ldsS, idxAdd(b, stageS, so)));
      }
    }
    for (int64_t j = 0; j < cfg.colTiles(); ++j) {
      Value nt16 = idxDiv(b, idxAdd(b, nw, j * 16), 16);
      Value chunk = idxAdd(b, idxMul(b, nt16, 16 * kbPacked), idxMul(b, kc, 1024));
      auto i8x16 = VectorType::get({16}, b.getI8Type());
      if (cfg.isGfx950()) {
        Value v = vector::LoadOp::create(b, i8x16, wBase, ValueRange{idxAdd(b, chunk, idxMul(b, lane, 16))});
        bFrag.push_back(vector::BitCastOp::create(
            b, VectorType::get({32}, b.getType<Float4E2M1FNType>()), v));
      } else {
        // Lane (row l%16, group h) takes K quarters h and h+2 of the chunk.
        Value o0 = idxAdd(b, chunk, idxAdd(b, idxMul(b, lgroup, 256), idxMul(b, l16, 16)));
        Value v0 = vector::LoadOp::create(b, i8x16, wBase, ValueRange{o0});
        Value v1 = vector::LoadOp::create(b, i8x16, wBase, ValueRange{idxAdd(b, o0, 512)});
        SmallVector<int64_t> mask = llvm::to_vector(llvm::seq<int64_t>(0, 32));
        Value v = vector::ShuffleOp::create(b, v0, v1, mask);
        bFrag.push_back(vector::BitCastOp::create(
            b, VectorType::get({64}, b.getType<Float4E2M1FNType>()), v));
        Value ncol = idxAdd(b, idxAdd(b, nw, j * 16), l16);
        Value so = idxAdd(b, idxMul(b, idxDiv(b, ncol, 32), groupBytes),
                       idxAdd(b, idxMul(b, kc, 128), idxMul(b, idxRem(b, ncol, 32), 4)));
        bFragScale.push_back(loadScaleDword(sBase, so));
      }
    }
    auto accTy = VectorType::get({cfg.accPerLane()}, b.getF32Type());
    for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
      for (int64_t j = 0; j < cfg.colTiles(); ++j) {
        Value &c = parts[mt * cfg.colTiles() + j];
        if (cfg.isGfx950()) {
          uint32_t ia = uint32_t(2 * s + mt % 2);
          uint32_t ib = uint32_t((cfg.subSteps() == 2 ? 2 * s : 0) + j % 2);
          c = amdgpu::ScaledMFMAOp::create(b, accTy, 16, 16, 128, aFrag[mt], bFrag[j], c,
                                           aScale[mt / 2], bScale[j / 2], ia, ib);
        } else {
          c = amdgpu::ScaledWMMAOp::create(b, accTy, 16, 16, 128, aFrag[mt], bFrag[j], c,
                                           aFragScale[mt], 0, bFragScale[j], 0);
        }
      }
  }
  tiles[op.getResult()] = Accumulator{std::move(parts)};
  return success();
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::lowerActivation(ImplicitLocOpBuilder &b, tile::ActivationOp op) {
  Accumulator *gate = handle<Accumulator>(op.getInput());
  Accumulator *up = op.getUp() ? handle<Accumulator>(op.getUp()) : nullptr;
  if (!gate || (op.getUp() && !up))
    return op.emitOpError() << "operands must be accumulator tiles";
  Accumulator out;
  for (size_t i = 0; i < gate->parts.size(); ++i)
    out.parts.push_back(emitActivation(b, op, gate->parts[i], up ? up->parts[i] : Value()));
  tiles[op.getResult()] = std::move(out);
  return success();
}

LogicalResult KernelEmitter::lowerStore(ImplicitLocOpBuilder &b, tile::StoreOp op) {
  Accumulator *acc = handle<Accumulator>(op.getValue());
  if (!acc)
    return op.emitOpError() << "on " << cfg.chip << " only accumulator tiles can be stored";
  if (op.getWorkspace())
    return op.emitOpError() << "split-K reductions are not lowered for AMD yet";
  Value base = mapping.lookup(op.getBase()), row0 = mapping.lookup(op.getRow()),
        col0 = mapping.lookup(op.getCol()), ldv = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows());
  Type elem = cast<MemRefType>(base.getType()).getElementType();
  const int regs = cfg.accPerLane();
  // Accumulator register r of lane l is C[regs * (l/16) + r][l % 16].
  Value rowBase = idxMul(b, lgroup, regs);
  Value nw = idxAdd(b, col0, idxMul(b, wave, cfg.colTiles() * 16));
  for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
    for (int64_t j = 0; j < cfg.colTiles(); ++j) {
      Value part = acc->parts[mt * cfg.colTiles() + j];
      if (elem.isBF16())
        part = arith::TruncFOp::create(b, VectorType::get({regs}, elem), part);
      Value col = idxAdd(b, idxAdd(b, nw, j * 16), l16);
      for (int r = 0; r < regs; ++r) {
        Value rowIn = idxAdd(b, rowBase, mt * 16 + r);
        Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, rowIn, valid);
        auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value v = vector::ExtractOp::create(b, part, ArrayRef<int64_t>{r});
        Value at = idxAdd(b, arith::MulIOp::create(b, idxAdd(b, row0, rowIn), ldv), col);
        memref::StoreOp::create(b, v, base, ValueRange{at});
      }
    }
  return success();
}
