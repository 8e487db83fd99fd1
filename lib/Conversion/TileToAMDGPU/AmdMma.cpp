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
#include "mxfp4/Conversion/ActivationEmitter.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"

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
  return 32 * scaleStorageShape(tile::fromTile(layout), 32, k / 32).cols;
}

LogicalResult KernelEmitter::lowerScaledMma(ImplicitLocOpBuilder &b, tile::ScaledMmaOp op) {
  PendingWeight *w = handle<PendingWeight>(op.getB());
  PendingScales *ws = handle<PendingScales>(op.getBScales());
  Accumulator *acc = handle<Accumulator>(op.getAcc());
  if (!handle<LdsData>(op.getA()) || !handle<LdsScales>(op.getAScales()))
    return op.emitOpError() << "on " << cfg.chip
                            << " A and its scales must come from mxtile.quantize or mxtile.load_mx";
  if (!w || !ws)
    return op.emitOpError() << "on " << cfg.chip
                            << " B and its scales must come from mxtile.load_weight / load_scales";
  if (!acc)
    return op.emitOpError() << "accumulator must come from mxtile.zero, scaled_mma or the K loop";
  if (w->op.getLayout() != tile::WeightLayoutKind::gfx950_mfma16)
    return op.emitOpError() << "on " << cfg.chip << " weights must use the gfx950_mfma16 layout";
  tile::ScaleLayoutKind want = cfg.hw->scaleLayout();
  if (ws->op.getLayout() != want)
    return op.emitOpError() << "on " << cfg.chip << " weight scales must use the "
                            << tile::stringifyScaleLayoutKind(want) << " layout";

  const int64_t kTotal = w->op.getK();
  MmaOperands ops;
  ops.lane = lane;
  ops.l16 = l16;
  ops.lgroup = lgroup;
  ops.ldsA = ldsA;
  ops.ldsS = ldsS;
  ops.stageA = stageA;
  ops.stageS = stageS;
  ops.weights = mapping.lookup(w->op.getBase());
  ops.scales = mapping.lookup(ws->op.getBase());
  ops.scaleBlock = mapping.lookup(ws->op.getKblock());
  ops.packedK = kTotal / 2;
  ops.scaleGroupBytes = scaleGroupBytes(ws->op.getLayout(), kTotal);
  Value n0 = mapping.lookup(w->op.getRow()), k0 = mapping.lookup(w->op.getCol());
  ops.waveColumn = idxAdd(b, n0, idxMul(b, wave, cfg.colTiles() * 16)); // this wave's first column
  ops.firstStep = idxDiv(b, k0, 128);                                   // first global 128-K step

  SmallVector<Value> parts = acc->parts;
  cfg.hw->emitMma(b, cfg, ops, parts);
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

void KernelEmitter::forEachStoredElement(
    ImplicitLocOpBuilder &b, const Accumulator &acc, Type elem, Value col0, Value ld, Value valid,
    bool nTail, llvm::function_ref<void(Value v, Value rowIn, Value col)> body) {
  const int regs = cfg.accPerLane();
  // Accumulator register r of lane l is C[regs * (l/16) + r][l % 16].
  Value rowBase = idxMul(b, lgroup, regs);
  Value nw = idxAdd(b, col0, idxMul(b, wave, cfg.colTiles() * 16));
  for (int64_t mt = 0; mt < cfg.rowTiles(); ++mt)
    for (int64_t j = 0; j < cfg.colTiles(); ++j) {
      Value part = acc.parts[mt * cfg.colTiles() + j];
      if (elem != cast<VectorType>(part.getType()).getElementType())
        part = arith::TruncFOp::create(b, VectorType::get({regs}, elem), part);
      Value col = idxAdd(b, idxAdd(b, nw, j * 16), l16);
      // An N tail: columns past N are not stored.
      Value inN = nTail ? idxLess(b, col, ld) : Value();
      for (int r = 0; r < regs; ++r) {
        Value rowIn = idxAdd(b, rowBase, mt * 16 + r);
        Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, rowIn, valid);
        if (nTail)
          ok = arith::AndIOp::create(b, ok, inN);
        auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        body(vector::ExtractOp::create(b, part, ArrayRef<int64_t>{r}), rowIn, col);
      }
    }
}

LogicalResult KernelEmitter::lowerStore(ImplicitLocOpBuilder &b, tile::StoreOp op) {
  Accumulator *acc = handle<Accumulator>(op.getValue());
  if (!acc)
    return op.emitOpError() << "on " << cfg.chip << " only accumulator tiles can be stored";
  if (op.getWorkspace())
    return lowerStoreSplitK(b, op, *acc);
  Value base = mapping.lookup(op.getBase()), row0 = mapping.lookup(op.getRow()),
        col0 = mapping.lookup(op.getCol()), ldv = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows());
  Type elem = cast<MemRefType>(base.getType()).getElementType();
  forEachStoredElement(b, *acc, elem, col0, ldv, valid, hasTail(op.getLd(), cfg.bn),
                       [&](Value v, Value rowIn, Value col) {
                         Value at =
                             idxAdd(b, arith::MulIOp::create(b, idxAdd(b, row0, rowIn), ldv), col);
                         memref::StoreOp::create(b, v, base, ValueRange{at});
                       });
  return success();
}
