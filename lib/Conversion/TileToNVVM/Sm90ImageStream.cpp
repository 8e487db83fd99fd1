//===- Sm90ImageStream.cpp - The streamed activation image (sm_90a) -------===//
//
// qdq_mxfp4 and the gemm_qdqa4w4 after it, at the same time: the GEMM is the
// quantizer's programmatic dependent, which every quantizer workgroup lets
// in as it starts (TileToNVVM.cpp), so the GEMM's workgroups take the SMs
// (and the room beside the quantizer's small workgroups) while the image is
// still being written, and wait for each piece they copy instead of for the
// whole grid (griddepcontrol.wait). Every quantizer workgroup is resident
// before any GEMM workgroup starts, so the GEMM's waits cannot starve it.
//
// The quantizer: a grid of workgroups looping over the BM x 128 pieces in
// the order the GEMM reads them: K step j of each of the S splits, then
// step j + 1 (piece p: order p / R of the R = ceil(M / BM) row tiles, row
// tile p % R). After a piece's stores, each thread fences them for the
// async proxy (the GEMM reads them with bulk copies), a barrier, and the
// leader releases them (red.release) into the flag of (128-row block,
// chunk).
//
// The GEMM acquires the image a group of G = S - 1 K steps at a time (the
// prologue's steps, then every G-th step it issues): its last thread reads
// the group's flags at once, polls on each until the block's pieces
// (min(128 / BM, R - 128 b / BM)) are in, then fences once (fence.acq_rel,
// then the proxy fence); the workgroup barrier before the copies passes
// that on to thread 0, which issues them. Not thread 0 itself: its fences
// waited for its stages' copies in flight. After its K loop every
// workgroup counts itself into the flags it read, one thread a flag; the
// last of their N / BN readers (one tile of each N column reads each chunk
// of its block once) takes everything back out: the next launch finds
// zero. Slower so far than waiting for the whole grid, whether polling
// and counting in with atomics every step or acquiring once per group in
// the last thread (mxfp4-bench --image-stream=; see docs/Performance.md).
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Inline PTX with side effects (kept in spin loops) and its result, if any.
static Value ptx(ImplicitLocOpBuilder &b, Type result, ValueRange operands, StringRef code,
                 StringRef constraints) {
  auto op = LLVM::InlineAsmOp::create(b, result ? TypeRange{result} : TypeRange{}, operands,
                                      b.getStringAttr(code), b.getStringAttr(constraints),
                                      b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                                      LLVM::AsmDialectAttr(), ArrayAttr());
  return result ? op.getRes() : Value();
}

/// Orders this thread's global stores (generic proxy) before bulk copies
/// that read them (async proxy), or its acquire before its own copies.
static void fenceProxyAsyncGlobal(ImplicitLocOpBuilder &b) {
  ptx(b, Type(), {}, "fence.proxy.async.global;", "");
}

/// The K step of piece order `order` when S splits each read T / S steps
/// in turn: step order / S of split order % S.
static Value streamedStep(ImplicitLocOpBuilder &b, Value order, int64_t splits, int64_t steps) {
  return idxAdd(b, idxMul(b, idxRem(b, order, splits), steps / splits), idxDiv(b, order, splits));
}

Value Sm90Emitter::streamedCoordinate(ImplicitLocOpBuilder &b, tile::TileIdOp id, Value piece) {
  if (id.getDim() == 1)
    return idxRem(b, piece, streamRowTiles);
  return streamedStep(b, idxDiv(b, piece, streamRowTiles), cfg.imageStream, cfg.imageSteps);
}

Value Sm90Emitter::imageFlag(ImplicitLocOpBuilder &b, Value block, Value chunk) {
  Value at = arith::IndexCastUIOp::create(b, b.getI64Type(),
                                          idxAdd(b, idxMul(b, block, cfg.imageSteps), chunk));
  return LLVM::GEPOp::create(b, imageFlags.getType(), b.getI32Type(), imageFlags,
                             ArrayRef<LLVM::GEPArg>{at});
}

LogicalResult Sm90Emitter::lowerStreamedQuantizer(ImplicitLocOpBuilder &b, func::FuncOp kernel) {
  if (!rowsArg || !imageFlags)
    return kernel.emitError() << "the streamed quantizer takes M and then its flags";
  streamRowTiles = idxDiv(b, idxAdd(b, rowsArg, cfg.bm - 1), cfg.bm);
  Value pieces = idxMul(b, streamRowTiles, cfg.imageSteps);
  auto loop = scf::ForOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x), pieces,
                                 gpu::GridDimOp::create(b, gpu::Dimension::x));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    currentTile = loop.getInductionVar();
    if (failed(lowerBody(b, kernel)))
      return failure();
    Value rowTile = idxRem(b, currentTile, streamRowTiles);
    Value step =
        streamedStep(b, idxDiv(b, currentTile, streamRowTiles), cfg.imageStream, cfg.imageSteps);
    Value block = idxDiv(b, idxMul(b, rowTile, cfg.bm), sm90::kImageBlockRows);
    fenceProxyAsyncGlobal(b);
    gpu::BarrierOp::create(b);
    inLeader(b, [&] {
      ptx(b, Type(), {imageFlag(b, block, step)}, "red.release.gpu.global.add.u32 [$0], 1;", "l");
    });
  }
  gpu::ReturnOp::create(b);
  return success();
}

/// The quantizer's pieces in image block `block`: 128 / R, fewer in the last.
static Value piecesIn(ImplicitLocOpBuilder &b, Value rowsArg, Value block, int64_t rows) {
  const int64_t perBlock = sm90::kImageBlockRows / rows;
  Value rowTiles = idxDiv(b, idxAdd(b, rowsArg, rows - 1), rows);
  return arith::MinUIOp::create(b, idxConst(b, perBlock),
                                arith::SubIOp::create(b, rowTiles, idxMul(b, block, perBlock)));
}

void Sm90Emitter::waitImageSteps(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                 tile::LoadWeightOp weight, tile::LoadQdqOp act, Value first,
                                 Value steps) {
  auto i32 = b.getI32Type();
  const int64_t group = imageGroup(), perStep = cfg.chunksPerStep();
  Value start = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, cfg.blockThreads() - 1)),
      arith::AndIOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, first, steps),
                            arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                  idxRem(b, first, group), idxConst(b, 0))));
  auto ifStart = scf::IfOp::create(b, start, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifStart.thenBlock());
  Value block = idxDiv(b, mapping.lookup(act.getRow()), sm90::kImageBlockRows);
  Value chunk0 = idxDiv(b, valueAtStep(b, weight.getCol(), loop, first), 128);
  // The group's chunks, those past the split's last step read as its last.
  Value lastChunk = idxAdd(b, idxMul(b, arith::SubIOp::create(b, steps, first), perStep), -1);
  Value pieces = arith::IndexCastUIOp::create(b, i32, piecesIn(b, rowsArg, block, cfg.imageStream));
  auto load = [&](Value flag) {
    return ptx(b, i32, {flag}, "ld.relaxed.gpu.global.b32 $0, [$1];", "=r,l");
  };
  // All the group's flags are read at once (one round trip), then each
  // polled on (with a back-off) only if its pieces are not all in.
  SmallVector<Value> flags, seen;
  for (int64_t j = 0; j < group * perStep; ++j) {
    flags.push_back(imageFlag(
        b, block, idxAdd(b, chunk0, arith::MinUIOp::create(b, idxConst(b, j), lastChunk))));
    seen.push_back(load(flags.back()));
  }
  for (auto [flag, read] : llvm::zip(flags, seen)) {
    auto poll = scf::WhileOp::create(b, TypeRange{i32}, ValueRange{read});
    Block *before = b.createBlock(&poll.getBefore(), {}, {i32}, {b.getLoc()});
    Value pending =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, before->getArgument(0), pieces);
    scf::ConditionOp::create(b, pending, before->getArguments());
    b.createBlock(&poll.getAfter(), {}, {i32}, {b.getLoc()});
    // A wave of waiting leaders would otherwise keep L2 busy with flags.
    ptx(b, Type(), {}, "nanosleep.u32 64;", "");
    scf::YieldOp::create(b, ValueRange{load(flag)});
    b.setInsertionPointAfter(poll);
  }
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  fenceProxyAsyncGlobal(b);
}

void Sm90Emitter::countImageReads(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                  tile::LoadWeightOp weight, tile::LoadQdqOp act, Value steps) {
  auto i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  Value block = idxDiv(b, mapping.lookup(act.getRow()), sm90::kImageBlockRows);
  Value all = arith::IndexCastUIOp::create(
      b, i32, idxAdd(b, piecesIn(b, rowsArg, block, cfg.imageStream), cfg.imageReaders));
  // Thread j counts in chunk j % chunksPerStep of step j / chunksPerStep.
  const int64_t perStep = cfg.chunksPerStep();
  auto each = scf::ForOp::create(b, tid, idxMul(b, steps, perStep), idxConst(b, cfg.threads()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(each.getBody());
  Value j = each.getInductionVar();
  Value chunk =
      idxAdd(b, idxDiv(b, valueAtStep(b, weight.getCol(), loop, idxDiv(b, j, perStep)), 128),
             idxRem(b, j, perStep));
  Value flag = imageFlag(b, block, chunk);
  Value old = LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, flag, c32(1),
                                        LLVM::AtomicOrdering::monotonic);
  Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                     arith::AddIOp::create(b, old, c32(1)), all);
  auto ifLast = scf::IfOp::create(b, last, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifLast.thenBlock());
  LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, flag, arith::SubIOp::create(b, c32(0), all),
                            LLVM::AtomicOrdering::monotonic);
}
