//===- Sm90StreamK.cpp - Stream-K gemm_qdqa4w4 on sm_90a ------------------===//
//
// Whole tiles leave part of the last wave empty when the SMs do not divide
// them (7168x4224 at M = 2048: 448 BM 256 tiles are 3.4 waves of 132).
// Stream-K (mxtile.stream_k) runs G workgroups (one per SM). With W =
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
// per workgroup: its first stream-K segment's and its last's) and goes on.
// At the end of its run each workgroup announces its partial tiles on the
// tiles' counters, waits until every segment of them has, and sums its
// share of each tile (accumulator vectors q = r mod the segment count, r
// its place in K order) over the partials in K order, so the result does
// not depend on timing, and the reduction is spread over the segments'
// SMs (a tile's last segment summing all of it alone measured up to 7 us
// at 11 segments: ...-stream-k-*-sweep-*.log). The waits end because
// every workgroup writes all its partials before it waits, and the grid
// is resident at once (one workgroup per SM).
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

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
  streamStart = idxAdd(b, streamBase, idxDiv(b, idxMul(b, id, streamTotal), grid));
  Value end =
      idxAdd(b, streamBase, idxDiv(b, idxMul(b, idxAdd(b, id, 1), streamTotal), grid));
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
    for (Operation &op : kernel.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (failed(lower(b, &op)))
        return failure();
    }
  }
  // The end of the run: the partial tiles of its first and last stream-K
  // segments are announced on their tiles' counters (after one gpu-scope
  // fence for all of this workgroup's workspace stores), and the last
  // segment of each to arrive sums and stores it. Every copy has landed
  // and every wgmma completed: stage 0 holds the flag and the staged tile.
  tile::StoreOp store;
  kernel.walk([&](tile::StoreOp op) { store = op; });
  if (!store || !store.getWorkspace())
    return kernel.emitError() << "stream-K needs a store that reduces through a workspace";
  outputRegion = idxConst(b, cfg.shared().stagesOffset());
  auto gpuScope = NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU);
  NVVM::MembarOp::create(b, gpuScope);
  gpu::BarrierOp::create(b);
  Value firstBase = idxMul(b, firstTile, tileSteps), lastBase = idxMul(b, lastTile, tileSteps);
  auto ult = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y).getResult();
  };
  // First: partial unless it starts at step 0 and reaches the tile's end.
  Value firstPartial = arith::AndIOp::create(
      b, any,
      arith::OrIOp::create(b, ult(firstBase, streamStart),
                           ult(arith::SubIOp::create(b, end, firstBase), tileSteps)));
  // Last (another tile): it starts at step 0, partial unless it reaches the end.
  Value lastPartial = arith::AndIOp::create(
      b, arith::AndIOp::create(b, any, ult(firstTile, lastTile)),
      ult(arith::SubIOp::create(b, end, lastBase), tileSteps));
  // Announce both before waiting for either: a wait for a tile whose
  // other segment is announced after that workgroup's own first wait would
  // chain the grid's workgroups one after another.
  for (bool announce : {true, false})
    if (failed(finishStreamTile(b, store, firstTile, firstPartial, announce)) ||
        failed(finishStreamTile(b, store, lastTile, lastPartial, announce)))
      return failure();
  gpu::ReturnOp::create(b);
  return success();
}

/// The workspace's 16-byte unit of vector q of this thread in slot `slot`
/// (vector q of thread x of slot s at (s * Q + q) * threads + x: every warp
/// stores and loads 512 contiguous bytes).
static Value workspaceUnit(ImplicitLocOpBuilder &b, Value ws, Value slot, int64_t q, int64_t nVec,
                           int64_t threads, Value tid) {
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value wsPtr = LLVM::AddrSpaceCastOp::create(b, globalPtr, ws);
  Value unit = idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, slot, nVec), q), threads), tid);
  Value at = arith::IndexCastUIOp::create(b, b.getI64Type(), unit);
  return LLVM::GEPOp::create(b, globalPtr, VectorType::get({4}, b.getF32Type()), wsPtr,
                             ArrayRef<LLVM::GEPArg>{at});
}

LogicalResult Sm90Emitter::storeStreamK(ImplicitLocOpBuilder &b, ArrayRef<Value> tiles, Value out,
                                        Value row0, Value col0, Value ld, Value valid, Value ws) {
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y).getResult();
  };
  Value whole = arith::AndIOp::create(b, eq(segK0, idxConst(b, 0)), eq(segK1, tileSteps));
  auto wholeIf = scf::IfOp::create(b, whole, /*withElseRegion=*/true);
  b.setInsertionPointToStart(wholeIf.thenBlock());
  if (failed(storeThroughShared(b, tiles, out, row0, col0, ld, valid)))
    return failure();
  // The staging stage receives a later step by TMA (the async proxy) after
  // the next barrier: order this thread's accesses to it before that.
  fenceProxyAsync(b);
  // A partial tile goes to the workspace slot of this segment: 2b for
  // workgroup b's first stream-K segment, 2b + 1 for its last. Its sum
  // waits for the end of the run (finishStreamK): no fence or atomic here
  // stalls the K loop.
  b.setInsertionPointToStart(wholeIf.elseBlock());
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value mine = idxAdd(b, idxMul(b, id, 2),
                      arith::SelectOp::create(b, segFirstStream, idxConst(b, 0), idxConst(b, 1)));
  const int64_t nVec = int64_t(tiles.size());
  for (int64_t q = 0; q < nVec; ++q)
    LLVM::StoreOp::create(b, tiles[q], workspaceUnit(b, ws, mine, q, nVec, cfg.threads(), tid),
                          /*alignment=*/16);
  b.setInsertionPointAfter(wholeIf);
  return success();
}

LogicalResult Sm90Emitter::finishStreamTile(ImplicitLocOpBuilder &b, tile::StoreOp store,
                                            Value tile, Value partial, bool announce) {
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y).getResult();
  };
  auto partialIf = scf::IfOp::create(b, partial, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(partialIf.thenBlock());
  Value ws = mapping.lookup(store.getWorkspace()), counters = mapping.lookup(store.getCounters());
  // The tile's segments: workgroups b0..b1 in K order; this one is r-th.
  Value tileBase = idxMul(b, tile, tileSteps);
  Value b0 = streamOwner(b, tileBase);
  Value b1 = streamOwner(b, idxAdd(b, idxAdd(b, tileBase, tileSteps), -1));
  Value segments = idxAdd(b, arith::SubIOp::create(b, b1, b0), 1);
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value r = arith::SubIOp::create(b, id, b0);
  // Counter 2t counts the segments whose partial tile is written, 2t + 1
  // those that have summed their share; the last of those zeroes both.
  Value arrived = idxMul(b, tile, 2), left = idxAdd(b, arrived, 1);
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto atomicAdd = [&](Value at, int64_t v) {
    return arith::IndexCastUIOp::create(
               b, b.getIndexType(),
               memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi, c32(v), counters,
                                           ValueRange{at}))
        .getResult();
  };
  Value isLeader = cmp(arith::CmpIPredicate::eq, tid, idxConst(b, 0));
  if (announce) {
    // This partial tile is written (the caller fenced every thread's stores).
    auto leaderIf = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
    b.setInsertionPointToStart(leaderIf.thenBlock());
    atomicAdd(arrived, 1);
    return success();
  }
  auto gpuScope = NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU);
  {
    // Wait for the tile's other segments: each workgroup announces all its
    // partial tiles at the end of its run before it waits for any, and the
    // grid is resident at once (one workgroup per SM), so the wait ends.
    auto leaderIf = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard leaderGuard(b);
    b.setInsertionPointToStart(leaderIf.thenBlock());
    auto spin = scf::WhileOp::create(b, TypeRange{}, ValueRange{});
    Block *before = b.createBlock(&spin.getBefore());
    b.setInsertionPointToStart(before);
    scf::ConditionOp::create(b, cmp(arith::CmpIPredicate::ult, atomicAdd(arrived, 0), segments),
                             ValueRange{});
    Block *after = b.createBlock(&spin.getAfter());
    b.setInsertionPointToStart(after);
    scf::YieldOp::create(b);
  }
  gpu::BarrierOp::create(b);
  NVVM::MembarOp::create(b, gpuScope);

  // This workgroup sums the accumulator vectors q = r (mod segments) of
  // every partial tile, in K order, and stores them.
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value b0Start = idxAdd(b, streamBase, idxDiv(b, idxMul(b, b0, streamTotal), grid));
  // b0's segment is its last unless its run starts at the tile's step 0;
  // the later workgroups hold the tile in their first stream-K segment.
  Value b0Slot = idxAdd(b, idxMul(b, b0, 2),
                        arith::SelectOp::create(b, cmp(arith::CmpIPredicate::ult, b0Start, tileBase),
                                                idxConst(b, 1), idxConst(b, 0)));
  const int64_t nVec = cfg.tilesPerWarp() * cfg.tokenTiles(), threads = cfg.threads();
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto load = [&](Value slot, int64_t q) -> Value {
    return LLVM::LoadOp::create(b, v4f32, workspaceUnit(b, ws, slot, q, nVec, threads, tid),
                                /*alignment=*/16);
  };
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value out = LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(store.getBase()));
  Value row0 = valueForTile(b, store.getRow(), tile), col0 = valueForTile(b, store.getCol(), tile);
  Value ld = valueForTile(b, store.getLd(), tile);
  Value valid = valueForTile(b, store.getValidRows(), tile);
  Value column = idxAdd(b, idxAdd(b, col0, idxMul(b, warp, 16 * cfg.tilesPerWarp())), g);
  for (int64_t q = 0; q < nVec; ++q) {
    Value mine = cmp(arith::CmpIPredicate::eq, idxRem(b, idxConst(b, q), segments), r);
    auto mineIf = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard mineGuard(b);
    b.setInsertionPointToStart(mineIf.thenBlock());
    auto sum = scf::ForOp::create(b, idxConst(b, 1), segments, idxConst(b, 1),
                                  ValueRange{load(b0Slot, q)});
    {
      OpBuilder::InsertionGuard bodyGuard(b);
      b.setInsertionPointToStart(sum.getBody());
      Value slot = idxMul(b, idxAdd(b, b0, sum.getInductionVar()), 2);
      scf::YieldOp::create(b, ValueRange{arith::AddFOp::create(
                                  b, sum.getRegionIterArgs()[0], load(slot, q))});
    }
    // Vector q = (i, j): (weight row g + 8 hh, token 8 j + 2t + tt) at
    // element 2 hh + tt; bf16 stores of the tokens that exist.
    const int64_t i = q / cfg.tokenTiles(), j = q % cfg.tokenTiles();
    for (int64_t tt = 0; tt < 2; ++tt) {
      Value token = idxAdd(b, idxMul(b, t, 2), j * 8 + tt);
      auto okIf = scf::IfOp::create(b, cmp(arith::CmpIPredicate::ult, token, valid),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard okGuard(b);
      b.setInsertionPointToStart(okIf.thenBlock());
      Value rowBase = idxMul(b, idxAdd(b, row0, token), ld);
      for (int64_t hh = 0; hh < 2; ++hh) {
        Value v = vector::ExtractOp::create(b, sum.getResult(0), ArrayRef<int64_t>{hh * 2 + tt});
        Value at = arith::IndexCastUIOp::create(
            b, b.getI64Type(), idxAdd(b, rowBase, idxAdd(b, column, i * 16 + hh * 8)));
        Value ptr = LLVM::GEPOp::create(b, globalPtr, b.getBF16Type(), out,
                                        ArrayRef<LLVM::GEPArg>{at});
        LLVM::StoreOp::create(b, arith::TruncFOp::create(b, b.getBF16Type(), v), ptr,
                              /*alignment=*/2);
      }
    }
  }
  // Every thread has loaded its share before the leader counts it; the last
  // workgroup to leave zeroes both counters (no one waits on them then).
  gpu::BarrierOp::create(b);
  auto leaderIf = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
  b.setInsertionPointToStart(leaderIf.thenBlock());
  Value lastOut = cmp(arith::CmpIPredicate::eq, atomicAdd(left, 1), idxAdd(b, segments, -1));
  auto resetIf = scf::IfOp::create(b, lastOut, /*withElseRegion=*/false);
  b.setInsertionPointToStart(resetIf.thenBlock());
  for (Value at : {arrived, left})
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::assign, c32(0), counters, ValueRange{at});
  return success();
}
