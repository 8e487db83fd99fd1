//===- Sm90Persistent.cpp - The persistent tile loop on sm_90a ------------===//
//
// A persistent gemm_qdqa4w4 (mxtile.persistent) is launched with as many
// workgroups as are resident at once (LaunchGeometry::persistentPerSm);
// workgroup b takes the output tiles b, b + G, b + 2G, ... (G workgroups),
// tile t being N tile t % (N / BN) and M tile t / (N / BN). The kernel
// body is lowered once inside that loop. Its stage barriers are set up
// once, and the stages count K steps across tiles: the i-th tile's step s
// is the workgroup's step i * steps + s, in stage (i * steps + s) % S. So
// while a tile's last steps run, its stages already receive the next
// tile's first S - 1 (Sm90StagedKLoop.cpp): no tile but the first waits
// for its first copies. A tile's store is deferred into the next tile's
// first K step, after that step's wgmmas are issued (the loop carries the
// accumulators), so the tensor cores work while it leaves; the last
// tile's store follows the loop.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

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
  if (!def || !isScalarArith(def))
    return mapping.lookup(v);
  // Constants too are re-emitted here: the last tile's store follows the
  // tile loop, in which the body's were lowered.
  if (def->getNumOperands() == 0)
    return b.clone(*def)->getResult(cast<OpResult>(v).getResultNumber());
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

LogicalResult Sm90Emitter::storeDeferredTile(ImplicitLocOpBuilder &b, ArrayRef<Value> accs,
                                             Value tile) {
  tile::StoreOp op = deferredStore;
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value out = LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getBase()));
  return storeThroughShared(b, accs, out, valueForTile(b, op.getRow(), tile),
                            valueForTile(b, op.getCol(), tile), valueForTile(b, op.getLd(), tile),
                            valueForTile(b, op.getValidRows(), tile));
}

LogicalResult Sm90Emitter::lowerPersistent(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  if (failed(countTiles(b, kernel)))
    return failure();
  kernel.walk([&](tile::StoreOp s) { deferredStore = s; });
  if (!deferredStore)
    return kernel.emitError() << "a persistent kernel stores its tiles with mxtile.store";
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
  // The loop carries the accumulators of the tile before: each tile's
  // store runs in the next one's first K step, after its wgmmas are
  // issued, so the tensor cores are busy while the tile leaves.
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, v4f32, DenseElementsAttr::get(v4f32, 0.0f));
  SmallVector<Value> inits(cfg.tilesPerWarp() * cfg.tokenTiles(), zero);
  auto loop = scf::ForOp::create(b, idxConst(b, 0), mine, idxConst(b, 1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    tileIter = loop.getInductionVar();
    currentTile = arith::AddIOp::create(b, first, arith::MulIOp::create(b, tileIter, stride));
    nextTile = arith::AddIOp::create(b, currentTile, stride);
    previousAccs.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    finishedAccs.clear();
    if (failed(lowerBody(b, kernel)))
      return failure();
    if (finishedAccs.size() != inits.size())
      return kernel.emitError() << "a persistent kernel stores one accumulator tile per tile";
    scf::YieldOp::create(b, finishedAccs);
  }
  // The last tile's store.
  auto lastIf = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lastIf.thenBlock());
    Value last = arith::AddIOp::create(
        b, first, arith::MulIOp::create(b, idxAdd(b, mine, -1), stride));
    SmallVector<Value> accs(loop.getResults().begin(), loop.getResults().end());
    if (failed(storeDeferredTile(b, accs, last)))
      return failure();
  }
  gpu::ReturnOp::create(b);
  return success();
}
