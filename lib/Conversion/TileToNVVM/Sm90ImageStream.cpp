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
// leader releases them by adding 1 to the flag of (128-row block, chunk).
//
// The GEMM's leader, before a chunk's bulk copies: polls the flag until the
// block's pieces (min(128 / BM, R - 128 b / BM)) are in, acquires them
// (fence, then the proxy fence), and adds 1 for itself. The flag's last
// reader, N / BN of them (one tile of each N column reads each chunk of its
// block once), takes everything back out: the next launch finds zero.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Orders this thread's global stores (generic proxy) before bulk copies
/// that read them (async proxy), or its acquire before its own copies.
static void fenceProxyAsyncGlobal(ImplicitLocOpBuilder &b) {
  LLVM::InlineAsmOp::create(b, /*res=*/Type(), ValueRange{},
                            b.getStringAttr("fence.proxy.async.global;"), b.getStringAttr(""),
                            b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                            LLVM::AsmDialectAttr(), ArrayAttr());
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
      releaseArrival(b, imageFlags, idxAdd(b, idxMul(b, block, cfg.imageSteps), step));
    });
  }
  gpu::ReturnOp::create(b);
  return success();
}

void Sm90Emitter::waitImageChunk(ImplicitLocOpBuilder &b, Value block, Value chunk) {
  auto i32 = b.getI32Type();
  auto c32 = [&](Value v) { return arith::IndexCastUIOp::create(b, i32, v).getResult(); };
  // The quantizer's pieces in this block: 128 / R, fewer in the last one.
  const int64_t rows = cfg.imageStream, perBlock = sm90::kImageBlockRows / rows;
  Value rowTiles = idxDiv(b, idxAdd(b, rowsArg, rows - 1), rows);
  Value pieces = arith::MinUIOp::create(
      b, idxConst(b, perBlock), arith::SubIOp::create(b, rowTiles, idxMul(b, block, perBlock)));
  Value flag = idxAdd(b, idxMul(b, block, cfg.imageSteps), chunk);
  auto poll = scf::WhileOp::create(b, TypeRange{}, ValueRange{});
  b.createBlock(&poll.getBefore());
  Value seen = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                           arith::ConstantIntOp::create(b, 0, 32), imageFlags,
                                           ValueRange{flag});
  Value pending = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, seen, c32(pieces));
  scf::ConditionOp::create(b, pending, ValueRange{});
  b.createBlock(&poll.getAfter());
  // Back off between polls: a wave of waiting leaders would otherwise keep
  // L2's atomic units from the quantizer's own.
  LLVM::InlineAsmOp::create(b, /*res=*/Type(), ValueRange{}, b.getStringAttr("nanosleep.u32 64;"),
                            b.getStringAttr(""), b.getUnitAttr(), UnitAttr(),
                            LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
  scf::YieldOp::create(b, ValueRange{});
  b.setInsertionPointAfter(poll);
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  fenceProxyAsyncGlobal(b);
  // Count this reader in; the last of the N columns' takes all back out.
  Value old = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                          arith::ConstantIntOp::create(b, 1, 32), imageFlags,
                                          ValueRange{flag});
  Value all = c32(idxAdd(b, pieces, cfg.imageReaders));
  Value last = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq,
      arith::AddIOp::create(b, old, arith::ConstantIntOp::create(b, 1, 32)), all);
  auto ifLast = scf::IfOp::create(b, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLast.thenBlock());
  memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                              arith::SubIOp::create(b, arith::ConstantIntOp::create(b, 0, 32), all),
                              imageFlags, ValueRange{flag});
}
