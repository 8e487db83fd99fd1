//===- Sm90StreamK.cpp - Stream-K gemm_qdqa4w4 on sm_90a ------------------===//
//
// Whole tiles leave part of the last wave empty when the SMs do not divide
// them (7168x4224 at M = 2048: 896 BM 128 tiles are 6.8 waves of 132).
// Stream-K (mxtile.stream_k) instead counts the T = tiles x K steps
// iterations, tile t's step k being iteration t * steps + k, and gives
// workgroup b of the G launched (one per SM) the run [b T / G, (b+1) T / G).
// A run is a sequence of segments, the K steps [k0, k1) of one tile each:
// whole tiles in its middle, a tile's tail at its start and a tile's head
// at its end. The kernel body is lowered once inside the loop over them
// (the K loop over [k0, k1), Sm90StagedKLoop.cpp). The stages count the
// run's steps, so a segment's last steps already receive the next one's
// first: no segment but the first waits for its first copies.
//
// A segment covering its whole tile stores it as usual, staged in the
// shared stage of its last step (free once the loop's wgmmas are done; the
// other stages may be receiving the next segment). The segments of a
// split tile belong to consecutive workgroups b0..b1 (b0 holding step 0);
// each stores its partial tile in f32 to its slot of the workspace (two
// per workgroup: its first segment's and its last's), and the last of them
// to finish (by the tile's counter) sums all of them in K order, so the
// result does not depend on timing, stores the tile and zeroes the counter.
// No workgroup ever waits for another.
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

Value Sm90Emitter::streamOwner(ImplicitLocOpBuilder &b, Value it) {
  // The largest b with b T / G <= it (floors): ((it + 1) G - 1) / T.
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  return idxDiv(b, idxAdd(b, idxMul(b, idxAdd(b, it, 1), grid), -1), streamTotal);
}

void Sm90Emitter::issueStreamStep(ImplicitLocOpBuilder &b, scf::ForOp loop, tile::LoadWeightOp w,
                                  tile::LoadQdqOp act, Value j, StageParts parts) {
  Value it = idxAdd(b, streamStart, j);
  Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, streamLen);
  issueStage(b, loop, w, idxRem(b, it, tileSteps), tileSteps, act, parts,
             {j, idxDiv(b, it, tileSteps), more});
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
  tileSteps = idxConst(b, to / by);
  streamTotal = idxMul(b, tileCount, to / by);
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  streamStart = idxDiv(b, idxMul(b, id, streamTotal), grid);
  Value end = idxDiv(b, idxMul(b, idxAdd(b, id, 1), streamTotal), grid);
  streamLen = arith::SubIOp::create(b, end, streamStart);
  initStages(b);
  // Segments: the tiles from the run's first iteration's to its last's.
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, streamStart, end);
  Value firstTile = idxDiv(b, streamStart, tileSteps);
  Value lastTile = idxDiv(b, arith::MaxUIOp::create(b, idxAdd(b, end, -1), streamStart), tileSteps);
  Value segments = arith::SelectOp::create(
      b, any, idxAdd(b, arith::SubIOp::create(b, lastTile, firstTile), 1), idxConst(b, 0));
  auto loop = scf::ForOp::create(b, idxConst(b, 0), segments, idxConst(b, 1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    tileIter = loop.getInductionVar();
    currentTile = idxAdd(b, firstTile, tileIter);
    Value tileBase = idxMul(b, currentTile, tileSteps);
    segK0 = arith::SubIOp::create(b, arith::MaxUIOp::create(b, streamStart, tileBase), tileBase);
    segK1 = arith::MinUIOp::create(b, arith::SubIOp::create(b, end, tileBase), tileSteps);
    for (Operation &op : kernel.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (failed(lower(b, &op)))
        return failure();
    }
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
  if (failed(storeThroughShared(b, tiles, out, row0, col0, ld, valid)))
    return failure();
  b.setInsertionPointToStart(wholeIf.elseBlock());

  // Partial tile: vector q of thread x of slot s at 16-byte unit
  // (s * Q + q) * threads + x of the workspace; slot 2b holds workgroup b's
  // first segment, 2b + 1 its last.
  auto i64 = b.getI64Type();
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value wsPtr = LLVM::AddrSpaceCastOp::create(b, globalPtr, ws);
  const int64_t nVec = int64_t(tiles.size()), threads = cfg.threads();
  auto unitPtr = [&](Value slot, int64_t q) {
    Value unit = idxAdd(b, idxMul(b, idxAdd(b, idxMul(b, slot, nVec), q), threads), tid);
    Value at = arith::IndexCastUIOp::create(b, i64, unit);
    return LLVM::GEPOp::create(b, globalPtr, v4f32, wsPtr, ArrayRef<LLVM::GEPArg>{at})
        .getResult();
  };
  Value id = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value mine = idxAdd(b, idxMul(b, id, 2),
                      arith::SelectOp::create(b, eq(tileIter, idxConst(b, 0)), idxConst(b, 0),
                                              idxConst(b, 1)));
  for (int64_t q = 0; q < nVec; ++q)
    LLVM::StoreOp::create(b, tiles[q], unitPtr(mine, q), /*alignment=*/16);
  auto gpuScope = NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU);
  NVVM::MembarOp::create(b, gpuScope);
  gpu::BarrierOp::create(b);

  // The tile's segments: workgroups b0..b1 in K order.
  Value tileBase = idxMul(b, currentTile, tileSteps);
  Value b0 = streamOwner(b, tileBase);
  Value b1 = streamOwner(b, idxAdd(b, idxAdd(b, tileBase, tileSteps), -1));
  Value segments = idxAdd(b, arith::SubIOp::create(b, b1, b0), 1);
  auto i32 = b.getI32Type();
  auto sharedI32 = [&] { return sharedPtr(b, outputRegion); };
  Value isLeader = eq(tid, idxConst(b, 0));
  {
    auto leaderIf = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(leaderIf.thenBlock());
    Value old = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                            arith::ConstantIntOp::create(b, 1, 32), counters,
                                            ValueRange{currentTile});
    Value last = eq(arith::IndexCastUIOp::create(b, b.getIndexType(), old),
                    idxAdd(b, segments, -1));
    LLVM::StoreOp::create(b, arith::ExtUIOp::create(b, i32, last), sharedI32());
  }
  gpu::BarrierOp::create(b);
  Value flag = LLVM::LoadOp::create(b, i32, sharedI32());
  auto lastIf = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, flag,
                               arith::ConstantIntOp::create(b, 0, 32)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lastIf.thenBlock());
    NVVM::MembarOp::create(b, gpuScope);
    // b0's segment is its last unless its run starts at the tile's step 0.
    Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
    Value b0Start = idxDiv(b, idxMul(b, b0, streamTotal), grid);
    Value b0Slot = idxAdd(b, idxMul(b, b0, 2),
                          arith::SelectOp::create(
                              b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, b0Start,
                                                       tileBase),
                              idxConst(b, 1), idxConst(b, 0)));
    SmallVector<Value> first;
    for (int64_t q = 0; q < nVec; ++q)
      first.push_back(LLVM::LoadOp::create(b, v4f32, unitPtr(b0Slot, q), /*alignment=*/16));
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
            LLVM::LoadOp::create(b, v4f32, unitPtr(slot, q), /*alignment=*/16)));
      scf::YieldOp::create(b, next);
    }
    SmallVector<Value> totals(sum.getResults().begin(), sum.getResults().end());
    if (failed(storeThroughShared(b, totals, out, row0, col0, ld, valid)))
      return failure();
    auto resetIf = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
    b.setInsertionPointToStart(resetIf.thenBlock());
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::assign,
                                arith::ConstantIntOp::create(b, 0, 32), counters,
                                ValueRange{currentTile});
  }
  b.setInsertionPointAfter(wholeIf);
  // The staging stage receives a later step by TMA (the async proxy) after
  // the next barrier: order this thread's accesses to it before that.
  fenceProxyAsync(b);
  return success();
}
