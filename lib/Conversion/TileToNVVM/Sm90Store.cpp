//===- Sm90Store.cpp - The epilogue on sm_90a: output stores, split-K -----===//
//
// The accumulator fragments (lane mapping of NvLowering.h: acc[i][j] holds
// (weight row g, token 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)) pass through
// shared memory on their way out: stmatrix writes them transposed into a
// BM x BN bf16 tile there, and the tile leaves in 16-byte stores, 2 BN
// contiguous bytes per token row, for the rows of M that exist (written
// from the fragments, a warp's bf16 stores would cover four 16-byte pieces
// of four rows). Split-K tiles are first summed over their
// splits, in split order (the result does not depend on timing):
// - BM 128, up to kMaxClusterSplits splits (Sm90Pipeline.h): the splits of
//   a tile are one thread-block cluster (1 x 1 x S, .reqnctapercluster);
//   each workgroup puts its partial tile in its own shared memory, and after
//   a cluster barrier workgroup r sums accumulator vectors q = r (mod S) of
//   all S through distributed shared memory (mapa + ld.shared::cluster) and
//   stores them; a second cluster barrier keeps every workgroup's shared
//   memory alive until read. No global workspace, no atomics, the reduction
//   spread over S SMs.
// - otherwise: partial tiles go to an f32 workspace in global memory, as the
//   threads hold them, and the tile's last split by index waits for them
//   (an atomic counter) and sums them with its own.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Element `at` (index) of the `elem` array at global pointer `base`.
static Value elementPtr(ImplicitLocOpBuilder &b, Value base, Type elem, Value at) {
  Value at64 = arith::IndexCastUIOp::create(b, b.getI64Type(), at);
  return LLVM::GEPOp::create(b, base.getType(), elem, base, ArrayRef<LLVM::GEPArg>{at64});
}

LogicalResult Sm90Emitter::storeThroughShared(ImplicitLocOpBuilder &b, ArrayRef<Value> tiles,
                                              Value out, Value row0, Value col0, Value ldv,
                                              Value valid, bool nTail) {
  const int64_t rowBytes = sm90::stagedRowBytes(cfg.bn);
  // Persistent kernels have a region of their own (their stages receive
  // the next tile meanwhile), stream-K takes the stage of the segment's
  // last step (the others may be receiving the next segment); the others
  // reuse the K loop's buffers.
  const sm90::SharedLayout l = cfg.shared();
  const int64_t regionBytes = cfg.persistent() ? l.outputBytes
                              : cfg.streamK    ? l.stageBytes()
                                               : l.barriersOffset();
  if (cfg.bm * rowBytes > regionBytes)
    return emitError(b.getLoc()) << "the staged output tile (" << cfg.bm * rowBytes
                                 << " bytes) does not fit the workgroup's shared memory";
  Value region = cfg.streamK ? outputRegion
                             : idxConst(b, cfg.persistent() ? l.outputOffset() : 0);
  // Every warpgroup's wgmmas have read the last buffers before they are
  // overwritten. A persistent kernel's own region was last read by its
  // previous tile's stores, and every K step since ended in a barrier.
  if (!cfg.persistent())
    barrier(b);
  // Each 8 x 8 block hh of accumulator vector (i, j), weight rows g and
  // tokens 2t, 2t + 1 in a thread (elements 2 hh, 2 hh + 1), is stmatrix's
  // fragment of a matrix whose rows are weight rows: `.trans` writes a
  // token's 8 weight rows as one 16-byte row of the tile, one instruction
  // for four matrices where 2-byte stores took 8. Matrix k = 2 (i J + j)
  // + hh; lane l addresses row l % 8 of matrix k0 + l / 8. Rows 272 (BN
  // 192: 400) bytes apart put a matrix's 8 rows on distinct banks.
  MLIRContext *ctx = b.getContext();
  auto layout = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col);
  auto shape = NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8);
  auto elt = NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16);
  const int64_t tokenTiles = cfg.tokenTiles();
  const int64_t matrices = cfg.tilesPerWarp() * tokenTiles * 2;
  Value warpCol = idxMul(b, warp, 16 * cfg.tilesPerWarp());
  Value laneMatrix = idxDiv(b, lane, 8), laneRow = idxRem(b, lane, 8);
  SmallVector<Value> pairs; // bf16x2 words, [k]
  for (Value v : tiles) {
    Value bf = arith::TruncFOp::create(b, VectorType::get({4}, b.getBF16Type()), v);
    Value words = vector::BitCastOp::create(b, VectorType::get({2}, b.getI32Type()), bf);
    for (int64_t hh = 0; hh < 2; ++hh)
      pairs.push_back(vector::ExtractOp::create(b, words, ArrayRef<int64_t>{hh}));
  }
  for (int64_t k0 = 0; k0 < matrices; k0 += 4) {
    const int64_t count = std::min<int64_t>(4, matrices - k0);
    Value k = idxAdd(b, laneMatrix, k0);
    if (count < 4) // lanes past the last matrix address its rows (ignored)
      k = arith::MinUIOp::create(b, k, idxConst(b, k0 + count - 1));
    Value ij = idxDiv(b, k, 2);
    Value token = idxAdd(b, idxMul(b, idxRem(b, ij, tokenTiles), 8), laneRow);
    Value col =
        idxAdd(b, warpCol,
               idxAdd(b, idxMul(b, idxDiv(b, ij, tokenTiles), 16), idxMul(b, idxRem(b, k, 2), 8)));
    Value at = idxAdd(b, idxAdd(b, idxMul(b, token, rowBytes), idxMul(b, col, 2)), region);
    NVVM::StMatrixOp::create(b, sharedPtr(b, at), ArrayRef<Value>(pairs).slice(k0, count), layout,
                             shape, elt);
  }
  barrier(b);
  // 16-byte unit u of the tile: token u / U, columns 8 (u % U) + 0..7, U = BN / 8.
  // (One bulk copy per token row instead, waited for before the region is
  // reused, was slower at 7168x768 M = 32 / 128 / 2048: mxfp4-bench
  // --preset=seed-dense, see docs/Performance.md.)
  auto v4i32 = VectorType::get({4}, b.getI32Type());
  Value rows = arith::MinUIOp::create(b, valid, idxConst(b, cfg.bm));
  const int64_t unitsPerRow = cfg.bn / 8;
  for (int64_t u0 = 0; u0 < cfg.bm * unitsPerRow; u0 += cfg.threads()) {
    Value u = idxAdd(b, tid, u0);
    Value row = idxDiv(b, u, unitsPerRow), unit = idxRem(b, u, unitsPerRow);
    Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows);
    if (nTail) // N % 8 == 0: a unit is in or out whole
      ok = arith::AndIOp::create(b, ok, idxLess(b, idxAdd(b, col0, idxMul(b, unit, 8)), ldv));
    auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v = LLVM::LoadOp::create(
        b, v4i32,
        sharedPtr(b, idxAdd(b, idxAdd(b, idxMul(b, row, rowBytes), idxMul(b, unit, 16)), region)),
        /*alignment=*/16);
    Value at = idxAdd(b, arith::MulIOp::create(b, idxAdd(b, row0, row), ldv),
                      idxAdd(b, col0, idxMul(b, unit, 8)));
    LLVM::StoreOp::create(b, v, elementPtr(b, out, b.getBF16Type(), at), /*alignment=*/16);
  }
  return success();
}

/// The splits' partial vectors summed in split order (what makes split-K
/// results independent of timing); `part(s)` loads split s's.
static Value sumInSplitOrder(ImplicitLocOpBuilder &b, int64_t splits,
                             llvm::function_ref<Value(int64_t s)> part) {
  Value total = part(0);
  for (int64_t s = 1; s < splits; ++s)
    total = arith::AddFOp::create(b, total, part(s));
  return total;
}

/// f32 registers a thread's workspace sum may fill with loaded slices at
/// once. ptxas issues an unrolled sum's loads together, so its registers
/// grow with the split count (BM 32 in two warpgroups: 128 at 7 splits, 238
/// at 14, spills at 16); past the budget the slices come a group at a time,
/// in a loop. Tight where another workgroup could share the SM (two of 256
/// threads need <= 128 registers), looser where none can.
static constexpr int64_t kSliceSumFloatsShared = 64, kSliceSumFloatsAlone = 112;

/// The split-K sum of the tile's last split: slices 0..splits-2 of the
/// workspace (`slice(s, q)` loads vector q of split s), then `own`, in split
/// order, so grouping the loads does not change a bit of the result.
static SmallVector<Value> sumSlices(ImplicitLocOpBuilder &b, int64_t splits, int64_t budgetFloats,
                                    ArrayRef<Value> own,
                                    llvm::function_ref<Value(Value s, int64_t q)> slice) {
  const int64_t nVec = int64_t(own.size()), slices = splits - 1;
  auto sliceAt = [&](int64_t s) { return arith::ConstantIntOp::create(b, s, 64).getResult(); };
  const int64_t group = std::max<int64_t>(1, budgetFloats / (4 * nVec));
  SmallVector<Value> totals;
  if (slices <= group) {
    for (int64_t q = 0; q < nVec; ++q)
      totals.push_back(sumInSplitOrder(b, splits, [&](int64_t s) -> Value {
        return s == slices ? own[q] : slice(sliceAt(s), q);
      }));
    return totals;
  }
  auto addSlice = [&](MutableArrayRef<Value> sum, Value s) {
    for (int64_t q = 0; q < nVec; ++q)
      sum[q] = arith::AddFOp::create(b, sum[q], slice(s, q));
  };
  // From -0.0, the identity of IEEE addition (-0 + x is x for every x, a
  // zero's sign included): whole groups in a loop, the rest after it. The
  // trip count comes from the grid (its z is the split count) so that LLVM
  // does not unroll the loop back into one batch of loads.
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  Value negZero = arith::ConstantOp::create(
      b, DenseElementsAttr::get(v4f32, APFloat::getZero(APFloat::IEEEsingle(), /*Negative=*/true)));
  totals.assign(nVec, negZero);
  const int64_t loops = slices / group;
  Value runtimeLoops = arith::DivUIOp::create(
      b, idxAdd(b, gpu::GridDimOp::create(b, gpu::Dimension::z), -1), idxConst(b, group));
  auto loop = scf::ForOp::create(b, idxConst(b, 0), runtimeLoops, idxConst(b, 1), totals);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> sum(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    Value first =
        arith::IndexCastUIOp::create(b, b.getI64Type(), idxMul(b, loop.getInductionVar(), group));
    for (int64_t j = 0; j < group; ++j)
      addSlice(sum, arith::AddIOp::create(b, first, sliceAt(j)));
    scf::YieldOp::create(b, sum);
  }
  totals.assign(loop.getResults().begin(), loop.getResults().end());
  for (int64_t s = loops * group; s < slices; ++s)
    addSlice(totals, sliceAt(s));
  for (int64_t q = 0; q < nVec; ++q)
    totals[q] = arith::AddFOp::create(b, totals[q], own[q]);
  return totals;
}

LogicalResult Sm90Emitter::lowerStore(ImplicitLocOpBuilder &b, tile::StoreOp op) {
  auto acc = accumulators.find(op.getValue());
  if (acc == accumulators.end())
    return op.emitOpError() << "on sm_90a only accumulator tiles can be stored";
  Value row0 = mapping.lookup(op.getRow()), col0 = mapping.lookup(op.getCol()),
        ldv = mapping.lookup(op.getLd()), valid = mapping.lookup(op.getValidRows());
  // The output is a plain pointer argument (TileToNVVM.cpp): 16-byte
  // stores need its address.
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value out = LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getBase()));
  Type elem = cast<MemRefType>(op.getBase().getType()).getElementType();
  Value nrow = idxAdd(b, idxAdd(b, col0, idxMul(b, warp, 16 * cfg.tilesPerWarp())), g);
  // An N tail (N not a whole number of tiles): columns past N are not stored.
  const bool nTail = sm90NTail(op.getLd());
  /// Calls `body(value, index)` for each valid output element of
  /// accumulator vector (i, j) `vec` of this thread.
  auto forEachElementOf = [&](int64_t i, int64_t j, Value vec,
                              llvm::function_ref<void(Value acc, Value at)> body) {
    for (int64_t tt = 0; tt < 2; ++tt) {
      Value tokIn = idxAdd(b, idxMul(b, t, 2), j * 8 + tt);
      Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tokIn, valid);
      auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value rowBase = arith::MulIOp::create(b, idxAdd(b, row0, tokIn), ldv);
      for (int64_t hh = 0; hh < 2; ++hh) {
        Value v = vector::ExtractOp::create(b, vec, ArrayRef<int64_t>{hh * 2 + tt});
        Value col = idxAdd(b, nrow, i * 16 + hh * 8);
        if (!nTail) {
          body(v, idxAdd(b, rowBase, col));
          continue;
        }
        auto inN = scf::IfOp::create(b, idxLess(b, col, ldv), /*withElseRegion=*/false);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(inN.thenBlock());
        body(v, idxAdd(b, rowBase, col));
      }
    }
  };
  /// The same for every vector of `tiles` ([i * tokenTiles + j]).
  auto forEachElement = [&](ArrayRef<Value> tiles,
                            llvm::function_ref<void(Value acc, Value at)> body) {
    for (int64_t i = 0; i < cfg.tilesPerWarp(); ++i)
      for (int64_t j = 0; j < cfg.tokenTiles(); ++j)
        forEachElementOf(i, j, tiles[i * cfg.tokenTiles() + j], body);
  };
  auto storeOut = [&](Value v, Value at) {
    if (elem.isBF16())
      v = arith::TruncFOp::create(b, b.getBF16Type(), v);
    LLVM::StoreOp::create(b, v, elementPtr(b, out, elem, at),
                          /*alignment=*/elem.getIntOrFloatBitWidth() / 8);
  };
  if (cfg.streamK) {
    if (!op.getWorkspace() || op.getSplits() != 0 || !elem.isBF16())
      return op.emitOpError() << "stream-K stores bf16 through its workspace (reduce with "
                                 "splits = 0)";
    return storeStreamK(b, acc->second, out, row0, col0, ldv, valid,
                        mapping.lookup(op.getWorkspace()), mapping.lookup(op.getCounters()));
  }
  if (op.getWorkspace() && op.getSplits() == 0)
    return op.emitOpError()
           << "splits = 0 (stream-K) needs a kernel whose #mxtile.schedule has stream_k";
  if (!op.getWorkspace()) {
    // The warp-split variant's first warp holds the workgroup's sums: a few
    // hundred elements, stored as they are.
    // 16-byte stores need rows of whole 16-byte units (N % 8 == 0).
    const bool wholeUnits = !nTail || getConstantIntValue(op.getLd()).value_or(1) % 8 == 0;
    if (elem.isBF16() && !cfg.warpSplitK && wholeUnits)
      return storeThroughShared(b, acc->second, out, row0, col0, ldv, valid, nTail);
    forEachElement(acc->second, storeOut);
    return success();
  }
  if (sm90::clusterSplitK(cfg.bm, op.getSplits(), cfg.bn))
    return storeClusterSplitK(b, acc->second, op.getSplits(), forEachElementOf, storeOut);

  return sumSplitsThroughWorkspace(
      b, acc->second,
      LLVM::AddrSpaceCastOp::create(b, globalPtr, mapping.lookup(op.getWorkspace())),
      mapping.lookup(op.getCounters()), op.getSplits(), [&](ArrayRef<Value> totals) {
        forEachElement(totals, storeOut);
        return success();
      });
}

LogicalResult Sm90Emitter::sumSplitsThroughWorkspace(
    ImplicitLocOpBuilder &b, ArrayRef<Value> tiles, Value ws, Value counters, int64_t splits,
    llvm::function_ref<LogicalResult(ArrayRef<Value> totals)> finish) {
  // Split-K: each workgroup stores its partial tile, as its threads hold
  // it, to its slice of the f32 workspace (a plain pointer: the slices
  // exceed 32-bit indexing): vector q of thread x at 16-byte unit
  // ((z * tiles + tile) * Q + q) * threads + x, so every warp stores and
  // loads 512 contiguous bytes. The tile's last split adds the slices in
  // split order and passes the sum to `finish`. Plain loads after the
  // counter see the other workgroups' stores (release/acquire through the
  // counter), and unlike atomic or volatile ones they are free to overlap.
  auto i64 = b.getI64Type();
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto toI64 = [&](Value v) { return arith::IndexCastUIOp::create(b, i64, v).getResult(); };
  Value tileIdx =
      arith::AddIOp::create(b,
                            arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::y),
                                                  gpu::GridDimOp::create(b, gpu::Dimension::x)),
                            gpu::BlockIdOp::create(b, gpu::Dimension::x));
  Value numTiles = arith::MulIOp::create(b, gpu::GridDimOp::create(b, gpu::Dimension::x),
                                         gpu::GridDimOp::create(b, gpu::Dimension::y));
  const int64_t nVec = int64_t(tiles.size());
  /// Thread tid's vector q of split `slice` (i64): slot z * tiles + tile.
  auto unitPtr = [&](Value slice, int64_t q) {
    Value slot = arith::AddIOp::create(b, arith::MulIOp::create(b, slice, toI64(numTiles)),
                                       toI64(tileIdx));
    return workspaceVector(b, ws, slot, q, nVec);
  };
  // The last split by index sums: the grid dispatches it after all of its
  // peers (blocks go out in linear order, z slowest; CUTLASS's serial
  // split-K waits on the same order), so it only waits for workgroups that
  // already run. The others store, release their arrival and leave without
  // waiting for the atomic's answer (ncu: a quarter of the decode kernel's
  // samples were whole workgroups waiting on it). Its own partial tile
  // never leaves its registers and is added last, as split order has it.
  Value z = toI64(gpu::BlockIdOp::create(b, gpu::Dimension::z));
  Value summer = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, z,
                                       arith::ConstantIntOp::create(b, splits - 1, 64));
  auto role = scf::IfOp::create(b, summer, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(role.elseBlock());
  for (int64_t q = 0; q < nVec; ++q)
    LLVM::StoreOp::create(b, tiles[q], unitPtr(z, q), /*alignment=*/16);
  arrive(b, counters, tileIdx);
  b.setInsertionPointToStart(role.thenBlock());
  waitForArrivals(b, counters, tileIdx, splits - 1);
  SmallVector<Value> totals = sumSlices(
      b, splits,
      sm90::workgroupsPerSm(cfg.shared()) >= 2 ? kSliceSumFloatsShared : kSliceSumFloatsAlone,
      tiles, [&](Value slice, int64_t q) -> Value {
        return LLVM::LoadOp::create(b, v4f32, unitPtr(slice, q), /*alignment=*/16);
      });
  return finish(totals);
}

Value Sm90Emitter::releaseArrival(ImplicitLocOpBuilder &b, Value counters, Value counter) {
  // The workgroup's stores happen before the leader's gpu-scope fence (the
  // barrier before it; the fence is cumulative), the fence before its add:
  // one thread waits on the memory system, not every thread with a fence.sc
  // of its own.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  return memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                     arith::ConstantIntOp::create(b, 1, 32), counters,
                                     ValueRange{counter});
}

void Sm90Emitter::barrier(ImplicitLocOpBuilder &b) { groupBarrier(b, idxConst(b, 0)); }

void Sm90Emitter::inLeader(ImplicitLocOpBuilder &b, llvm::function_ref<void()> body) {
  Value isLeader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0));
  auto ifOp = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void Sm90Emitter::arrive(ImplicitLocOpBuilder &b, Value counters, Value counter) {
  barrier(b);
  inLeader(b, [&] { releaseArrival(b, counters, counter); });
}

void Sm90Emitter::waitForArrivals(ImplicitLocOpBuilder &b, Value counters, Value counter,
                                  int64_t arrivals) {
  inLeader(b, [&] {
    // Polls with a relaxed atomic read (add 0) until every arrival is in,
    // then acquires them with a fence; the barrier passes that on to every
    // thread's loads. Taking its arrivals back out (rather than zeroing
    // the counter, and waiting for at least them rather than exactly them)
    // leaves the next launch a zero, and launches wrongly overlapped on one
    // PreparedWeight wrong results rather than a hang.
    auto poll = scf::WhileOp::create(b, TypeRange{}, ValueRange{});
    b.createBlock(&poll.getBefore());
    Value seen = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                             arith::ConstantIntOp::create(b, 0, 32), counters,
                                             ValueRange{counter});
    Value pending = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, seen,
                                          arith::ConstantIntOp::create(b, arrivals, 32));
    scf::ConditionOp::create(b, pending, ValueRange{});
    b.createBlock(&poll.getAfter());
    scf::YieldOp::create(b, ValueRange{});
    b.setInsertionPointAfter(poll);
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                arith::ConstantIntOp::create(b, -arrivals, 32), counters,
                                ValueRange{counter});
  });
  barrier(b);
}

Value Sm90Emitter::workspaceVector(ImplicitLocOpBuilder &b, Value ws, Value slot, int64_t q,
                                   int64_t nVec) {
  auto i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 64).getResult(); };
  Value unit = arith::AddIOp::create(b, arith::MulIOp::create(b, slot, c64(nVec)), c64(q));
  Value idx = arith::AddIOp::create(b, arith::MulIOp::create(b, unit, c64(cfg.threads())),
                                    arith::IndexCastUIOp::create(b, i64, tid));
  return LLVM::GEPOp::create(b, ws.getType(), VectorType::get({4}, b.getF32Type()), ws,
                             ArrayRef<LLVM::GEPArg>{idx});
}

Value Sm90Emitter::arriveLast(ImplicitLocOpBuilder &b, Value counters, Value counter,
                              Value lastOld, Value flag) {
  auto i32 = b.getI32Type();
  // The last arrival's acquire happens before every thread's loads (a
  // fence, then the barrier).
  barrier(b);
  inLeader(b, [&] {
    Value old = releaseArrival(b, counters, counter);
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
    Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                       arith::IndexCastUIOp::create(b, b.getIndexType(), old),
                                       lastOld);
    LLVM::StoreOp::create(b, arith::ExtUIOp::create(b, i32, last), flag);
  });
  barrier(b);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, LLVM::LoadOp::create(b, i32, flag),
                               arith::ConstantIntOp::create(b, 0, 32));
}

void Sm90Emitter::resetCounter(ImplicitLocOpBuilder &b, Value counters, Value counter) {
  inLeader(b, [&] {
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::assign,
                                arith::ConstantIntOp::create(b, 0, 32), counters,
                                ValueRange{counter});
  });
}

LogicalResult Sm90Emitter::storeClusterSplitK(ImplicitLocOpBuilder &b, ArrayRef<Value> tiles,
                                              int64_t splits, ElementsOf forEachElementOf,
                                              ElementFn storeOut) {
  const int64_t nVec = int64_t(tiles.size()), threads = cfg.threads();
  // The partial tile, vector q of thread x at 16-byte unit q * threads + x
  // from shared byte 0 (the K loop's buffers and stages are done with).
  if (nVec * threads * 16 > cfg.shared().totalBytes())
    return emitError(b.getLoc()) << "the split-K partial tile (" << nVec * threads * 16
                                 << " bytes) does not fit the workgroup's shared memory";
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto clusterPtr = LLVM::LLVMPointerType::get(b.getContext(), 7);
  auto unitPtr = [&](int64_t q) {
    Value offset = idxAdd(b, idxMul(b, tid, 16), q * threads * 16);
    Value at = arith::AddIOp::create(b, smemBase,
                                     arith::IndexCastUIOp::create(b, b.getI64Type(), offset));
    return LLVM::IntToPtrOp::create(b, sharedPtr, at).getResult();
  };
  // Every warpgroup's wgmmas have read the last stage before it is overwritten.
  barrier(b);
  for (int64_t q = 0; q < nVec; ++q)
    LLVM::StoreOp::create(b, tiles[q], unitPtr(q), /*alignment=*/16);
  // Release our partial tile to the cluster, acquire the others'.
  NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
  Value rank = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                            gpu::BlockIdOp::create(b, gpu::Dimension::z));
  for (int64_t i = 0; i < cfg.tilesPerWarp(); ++i)
    for (int64_t j = 0; j < cfg.tokenTiles(); ++j) {
      const int64_t q = i * cfg.tokenTiles() + j;
      Value mine = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank,
                                         arith::ConstantIntOp::create(b, q % splits, 32));
      auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value total = sumInSplitOrder(b, splits, [&](int64_t s) -> Value {
        Value remote = NVVM::MapaOp::create(b, clusterPtr, unitPtr(q),
                                            arith::ConstantIntOp::create(b, s, 32));
        return LLVM::LoadOp::create(b, v4f32, remote, /*alignment=*/16);
      });
      forEachElementOf(i, j, total, storeOut);
    }
  // No workgroup leaves (and frees its shared memory) while another reads it.
  NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
  return success();
}
