//===- Sm90Persistent.cpp - The persistent tile loop on sm_90a ------------===//
//
// A persistent gemm_qdqa4w4 (schedule: persistent) is launched with as many
// workgroups as are resident at once (LaunchGeometry::persistentPerSm);
// workgroup b takes the output tiles b, b + G, b + 2G, ... (G workgroups),
// tile t being N tile t % (N / BN) and M tile t / (N / BN). The kernel
// body is lowered once inside that loop. Its stage barriers are set up
// once, and the stages count K steps across tiles: the i-th tile's step s
// is the workgroup's step i * steps + s, in stage (i * steps + s) % S. So
// while a tile's last steps run, its stages already receive the next
// tile's first S - 1 (Sm90StagedKLoop.cpp): no tile but the first waits
// for its first copies, and a tile's store overlaps the next one's.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

Value Sm90Emitter::tileCoordinate(ImplicitLocOpBuilder &b, tile::TileIdOp id, Value tile) {
  switch (id.getDim()) {
  case 0:
    return idxRem(b, tile, cfg.persistentTilesX);
  case 1:
    return idxDiv(b, tile, cfg.persistentTilesX);
  default: // no split-K (verifyKernelSpec)
    return idxConst(b, 0);
  }
}

Value Sm90Emitter::valueForTile(ImplicitLocOpBuilder &b, Value v, Value tile) {
  Operation *def = v.getDefiningOp();
  if (auto id = dyn_cast_or_null<tile::TileIdOp>(def))
    return tileCoordinate(b, id, tile);
  if (!def || !isScalarArith(def) || def->getNumOperands() == 0)
    return mapping.lookup(v);
  IRMapping local;
  for (Value operand : def->getOperands())
    local.map(operand, valueForTile(b, operand, tile));
  return b.clone(*def, local)->getResult(cast<OpResult>(v).getResultNumber());
}

LogicalResult Sm90Emitter::countTiles(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  // M is the kernel's one integer argument (Kernels/GemmA4W4.cpp).
  Value m;
  for (BlockArgument arg : kernel.getArguments()) {
    if (!arg.getType().isSignlessInteger(32))
      continue;
    if (m)
      return kernel.emitError() << "a kernel with a tile loop takes one integer argument (M)";
    m = mapping.lookup(arg);
  }
  if (!m)
    return kernel.emitError() << "a kernel with a tile loop needs its M argument";
  Value rows = arith::IndexCastUIOp::create(b, b.getIndexType(), m);
  tileCount = idxMul(b, idxDiv(b, idxAdd(b, rows, cfg.bm - 1), cfg.bm), cfg.persistentTilesX);
  return success();
}

LogicalResult Sm90Emitter::lowerBody(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  for (Operation &op : kernel.getBody().front())
    if (!isa<func::ReturnOp>(op) && failed(lower(b, &op)))
      return failure();
  return success();
}

LogicalResult Sm90Emitter::lowerPersistent(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  if (failed(countTiles(b, kernel)))
    return failure();
  // Once per workgroup: the stage barriers. (The first tile's prologue
  // waits for the kernel that writes the image, Sm90StagedKLoop.cpp.)
  initStages(b);
  Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value stride = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value left = arith::SubIOp::create(b, tileCount, first);
  Value mine = arith::DivUIOp::create(
      b, arith::AddIOp::create(b, left, idxAdd(b, stride, -1)), stride);
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, first, tileCount);
  mine = arith::SelectOp::create(b, any, mine, idxConst(b, 0));
  auto loop = scf::ForOp::create(b, idxConst(b, 0), mine, idxConst(b, 1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    tileIter = loop.getInductionVar();
    currentTile = arith::AddIOp::create(b, first, arith::MulIOp::create(b, tileIter, stride));
    nextTile = arith::AddIOp::create(b, currentTile, stride);
    if (failed(lowerBody(b, kernel)))
      return failure();
  }
  gpu::ReturnOp::create(b);
  return success();
}
