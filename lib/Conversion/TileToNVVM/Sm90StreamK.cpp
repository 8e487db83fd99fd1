//===- Sm90StreamK.cpp - Stream-K gemm_qdqa4w4 on sm_90a ------------------===//
//
// Whole tiles leave part of the last wave empty when the SMs do not divide
// them (7168x4224 at M = 2048: 448 BM 256 tiles are 3.4 waves of 132).
// Stream-K (schedule: stream_k) runs G workgroups (one per SM). With W =
// tiles / G, workgroup b first takes whole tiles b, b + G, ..., b + (W-1) G
// (the waves that fill the SMs, in the order a one-tile grid runs them, so
// the L2 sees the same reuse); the remaining tiles' R = (tiles - W G) x
// steps iterations, tile t's step k being iteration t * steps + k, are
// split evenly: b takes [W G steps + b R / G, W G steps + (b+1) R / G). That
// run is a sequence of segments, the K steps [k0, k1) of one tile each: a
// tile's tail at its start, whole tiles, a tile's head at its end. The
// kernel body is lowered once inside the loop over all of b's segments (the
// K loop over [k0, k1), Sm90StagedKLoop.cpp). The stages count b's steps,
// so a segment's last steps already receive the next one's first: no
// segment but the first waits for its first copies.
//
// A segment covering its whole tile stores it as usual, staged in the
// shared stage of its last step (free once the loop's wgmmas are done; the
// other stages may be receiving the next segment). The segments of a
// split tile belong to consecutive workgroups b0..b1 (b0 holding step 0);
// each stores its partial tile in f32 to its slot of the workspace (two
// per workgroup: its first stream-K segment's and its last's), and the last
// of them to finish (by the tile's counter) sums all of them in K order, so
// the result does not depend on timing, stores the tile and zeroes the
// counter. No workgroup ever waits for another. (Deferring the counters and
// sums to the end of the run, or spreading each sum over the tile's
// segments after a wait for all of them, measured slower with mxfp4-bench
// --stream-k=1; see docs/Performance.md.)
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

Value Sm90Emitter::streamRunStart(ImplicitLocOpBuilder &b, Value w) {
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  return idxAdd(b, streamBase, idxDiv(b, idxMul(b, w, streamTotal), grid));
}

Value Sm90Emitter::streamOwner(ImplicitLocOpBuilder &b, Value it) {
  // The largest b with b R / G <= it - base (floors): ((it - base + 1) G - 1) / R.
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value rel = arith::SubIOp::create(b, it, streamBase);
  return idxDiv(b, idxAdd(b, idxMul(b, idxAdd(b, rel, 1), grid), -1), streamTotal);
}

void Sm90Emitter::issueStreamStep(ImplicitLocOpBuilder &b, scf::ForOp loop, tile::LoadWeightOp w,
                                  tile::LoadQdqOp act, Value j, StageParts parts) {
  // Whole tiles first (tile b + (j / steps) G), then the stream-K run.
  Value wholeSteps = idxMul(b, streamWaves, tileSteps);
  Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, wholeSteps);
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value wholeTile = idxAdd(b, id, idxMul(b, idxDiv(b, j, tileSteps), grid));
  Value it = idxAdd(b, streamStart, arith::SubIOp::create(b, j, wholeSteps));
  Value tile = arith::SelectOp::create(b, whole, wholeTile, idxDiv(b, it, tileSteps));
  Value k = arith::SelectOp::create(b, whole, idxRem(b, j, tileSteps), idxRem(b, it, tileSteps));
  Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, streamLen);
  issueStage(b, loop, w, k, tileSteps, act, parts, {j, tile, more});
}

LogicalResult Sm90Emitter::lowerStreamK(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  if (failed(countTiles(b, kernel)))
    return failure();
  // The K loop's bounds are constants (no split-K, verifyKernelSpec).
  scf::ForOp kLoop;
  kernel.walk([&](scf::ForOp f) { kLoop = f; });
  auto constant = [&](Value v) { return getConstantIntValue(v).value_or(-1); };
  const int64_t from = kLoop ? constant(kLoop.getLowerBound()) : -1;
  const int64_t to = kLoop ? constant(kLoop.getUpperBound()) : -1;
  const int64_t by = kLoop ? constant(kLoop.getStep()) : -1;
  if (from != 0 || to <= 0 || by <= 0)
    return kernel.emitError() << "stream-K needs a K loop over constant bounds from 0";
  const int64_t steps = to / by;
  tileSteps = idxConst(b, steps);
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  // Whole waves of whole tiles first; the rest is split evenly.
  streamWaves = idxDiv(b, tileCount, grid);
  Value wholeTiles = idxMul(b, streamWaves, grid);
  streamBase = idxMul(b, wholeTiles, steps);
  streamTotal = idxMul(b, arith::SubIOp::create(b, tileCount, wholeTiles), steps);
  streamStart = streamRunStart(b, id);
  Value end = streamRunStart(b, idxAdd(b, id, 1));
  Value wholeSteps = idxMul(b, streamWaves, steps);
  streamLen = idxAdd(b, wholeSteps, arith::SubIOp::create(b, end, streamStart));
  initStages(b);
  // Segments: the whole tiles, then the tiles from the stream-K run's first
  // iteration's to its last's.
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, streamStart, end);
  Value firstTile = idxDiv(b, streamStart, tileSteps);
  Value lastTile = idxDiv(b, arith::MaxUIOp::create(b, idxAdd(b, end, -1), streamStart), tileSteps);
  Value streamSegments = arith::SelectOp::create(
      b, any, idxAdd(b, arith::SubIOp::create(b, lastTile, firstTile), 1), idxConst(b, 0));
  auto loop = scf::ForOp::create(b, idxConst(b, 0), idxAdd(b, streamWaves, streamSegments),
                                 idxConst(b, 1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    tileIter = loop.getInductionVar();
    Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tileIter, streamWaves);
    Value s = arith::SubIOp::create(b, tileIter, streamWaves); // stream-K segment
    Value streamTile = idxAdd(b, firstTile, s);
    currentTile = arith::SelectOp::create(b, whole, idxAdd(b, id, idxMul(b, tileIter, grid)),
                                          streamTile);
    Value tileBase = idxMul(b, streamTile, steps);
    Value k0 = arith::SubIOp::create(b, arith::MaxUIOp::create(b, streamStart, tileBase), tileBase);
    Value k1 = arith::MinUIOp::create(b, arith::SubIOp::create(b, end, tileBase), tileSteps);
    segK0 = arith::SelectOp::create(b, whole, idxConst(b, 0), k0);
    segK1 = arith::SelectOp::create(b, whole, tileSteps, k1);
    segBase = arith::SelectOp::create(
        b, whole, idxMul(b, tileIter, steps),
        idxAdd(b, wholeSteps, arith::SubIOp::create(b, idxAdd(b, tileBase, k0), streamStart)));
    segFirstStream = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tileIter, streamWaves);
    if (failed(lowerBody(b, kernel)))
      return failure();
  }
  gpu::ReturnOp::create(b);
  return success();
}

LogicalResult Sm90Emitter::storeStreamK(ImplicitLocOpBuilder &b, ArrayRef<Value> tiles, Value out,
                                        Value row0, Value col0, Value ld, Value valid, Value ws,
                                        Value counters) {
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y).getResult();
  };
  Value whole = arith::AndIOp::create(b, eq(segK0, idxConst(b, 0)), eq(segK1, tileSteps));
  auto wholeIf = scf::IfOp::create(b, whole, /*withElseRegion=*/true);
  b.setInsertionPointToStart(wholeIf.thenBlock());
  if (failed(storeThroughShared(b, tiles, out, row0, col0, ld, valid, /*nTail=*/false)))
    return failure();
  b.setInsertionPointToStart(wholeIf.elseBlock());

  // Partial tile: slot 2b of the workspace holds workgroup b's first
  // stream-K segment, 2b + 1 its last.
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  Value wsPtr =
      LLVM::AddrSpaceCastOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 1), ws);
  const int64_t nVec = int64_t(tiles.size());
  auto vectorPtr = [&](Value slot, int64_t q) {
    return workspaceVector(b, wsPtr, arith::IndexCastUIOp::create(b, b.getI64Type(), slot), q,
                           nVec);
  };
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value mine = idxAdd(b, idxMul(b, id, 2),
                      arith::SelectOp::create(b, segFirstStream, idxConst(b, 0), idxConst(b, 1)));
  for (int64_t q = 0; q < nVec; ++q)
    LLVM::StoreOp::create(b, tiles[q], vectorPtr(mine, q), /*alignment=*/16);

  // The tile's segments: workgroups b0..b1 in K order.
  Value tileBase = idxMul(b, currentTile, tileSteps);
  Value b0 = streamOwner(b, tileBase);
  Value b1 = streamOwner(b, idxAdd(b, idxAdd(b, tileBase, tileSteps), -1));
  Value segments = idxAdd(b, arith::SubIOp::create(b, b1, b0), 1);
  Value isLast = arriveLast(b, counters, currentTile, idxAdd(b, segments, -1),
                            sharedPtr(b, outputRegion));
  auto lastIf = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lastIf.thenBlock());
    // b0's segment is its last unless its run starts at the tile's step 0.
    Value b0Slot = idxAdd(
        b, idxMul(b, b0, 2),
        arith::SelectOp::create(b,
                                arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                      streamRunStart(b, b0), tileBase),
                                idxConst(b, 1), idxConst(b, 0)));
    SmallVector<Value> first;
    for (int64_t q = 0; q < nVec; ++q)
      first.push_back(LLVM::LoadOp::create(b, v4f32, vectorPtr(b0Slot, q), /*alignment=*/16));
    auto sum = scf::ForOp::create(b, idxConst(b, 1), segments, idxConst(b, 1), first);
    {
      OpBuilder::InsertionGuard bodyGuard(b);
      b.setInsertionPointToStart(sum.getBody());
      // Workgroups after b0 hold the tile in their first segment.
      Value slot = idxMul(b, idxAdd(b, b0, sum.getInductionVar()), 2);
      SmallVector<Value> next;
      for (int64_t q = 0; q < nVec; ++q)
        next.push_back(arith::AddFOp::create(
            b, sum.getRegionIterArgs()[q],
            LLVM::LoadOp::create(b, v4f32, vectorPtr(slot, q), /*alignment=*/16)));
      scf::YieldOp::create(b, next);
    }
    SmallVector<Value> totals(sum.getResults().begin(), sum.getResults().end());
    if (failed(storeThroughShared(b, totals, out, row0, col0, ld, valid, /*nTail=*/false)))
      return failure();
    resetCounter(b, counters, currentTile);
  }
  b.setInsertionPointAfter(wholeIf);
  // The staging stage receives a later step by TMA (the async proxy) after
  // the next barrier: order this thread's accesses to it before that.
  fenceProxyAsync(b);
  return success();
}
