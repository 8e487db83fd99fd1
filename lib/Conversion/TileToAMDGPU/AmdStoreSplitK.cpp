//===- AmdStoreSplitK.cpp - Split-K partial tiles summed on AMD -----------===//
//
// mxtile.store with reduce(ws, counters) on gfx950 and gfx1250 (TileOps.td):
// split z of an output tile stores its partial sums in f32 to slice z of the
// workspace, element (row, col) of slice z at (z * M + row) * ld + col,
// M = row + validRows, only the elements inside the output. Every thread
// then releases its stores at agent scope, and after a barrier one thread
// counts the split in (an atomic add on the tile's counter, tile = id.y *
// ceil(N / BN) + id.x) and tells the workgroup through LDS whether it was the
// last. The last split acquires the others' stores and adds the slices in
// split order, 0 first, so the sum has the same bits whichever split
// finishes last; it stores the sum and sets the counter back to zero for
// the next launch. No workgroup waits for another.
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

LogicalResult KernelEmitter::lowerStoreSplitK(ImplicitLocOpBuilder &b, tile::StoreOp op,
                                              const Accumulator &acc) {
  const int64_t splits = op.getSplits();
  if (splits < 1)
    return op.emitOpError() << "on " << cfg.chip
                            << " split-K needs splits >= 1 (stream-K is not lowered for AMD)";
  Value base = mapping.lookup(op.getBase()), row0 = mapping.lookup(op.getRow()),
        col0 = mapping.lookup(op.getCol()), ldv = mapping.lookup(op.getLd()),
        valid = mapping.lookup(op.getValidRows()), ws = mapping.lookup(op.getWorkspace()),
        counters = mapping.lookup(op.getCounters());
  Type elem = cast<MemRefType>(base.getType()).getElementType();
  FloatType f32 = b.getF32Type();
  const bool nTail = hasTail(op.getLd(), cfg.bn);
  Value rows = idxAdd(b, row0, valid); // M
  Value z = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  // Element (rowIn, col) of the tile in slice `slice`.
  auto slot = [&](Value slice, Value rowIn, Value col) {
    Value row = idxAdd(b, idxMul(b, slice, rows), idxAdd(b, row0, rowIn));
    return idxAdd(b, arith::MulIOp::create(b, row, ldv), col);
  };

  // This split's partial sums, released to the other workgroups.
  forEachStoredElement(b, acc, f32, col0, ldv, valid, nTail, [&](Value v, Value rowIn, Value col) {
    memref::StoreOp::create(b, v, ws, ValueRange{slot(z, rowIn, col)});
  });
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "agent");
  gpu::BarrierOp::create(b);

  // One thread counts the split in; the LDS scale buffer (free after the
  // K loop's last MMA, which the barrier above orders) carries the answer.
  // The grid's x extent is the N tiles: ceil(ld / BN).
  Value tilesAlongN = idxDiv(b, idxAdd(b, ldv, cfg.bn - 1), cfg.bn);
  Value tile = idxAdd(b, idxMul(b, gpu::BlockIdOp::create(b, gpu::Dimension::y), tilesAlongN),
                      gpu::BlockIdOp::create(b, gpu::Dimension::x));
  IntegerType i32 = b.getI32Type(), i8 = b.getI8Type();
  Value zeroIdx = idxConst(b, 0);
  auto leader = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, zeroIdx), /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(leader.thenBlock());
    Value old = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                            arith::ConstantIntOp::create(b, i32, 1), counters,
                                            ValueRange{tile});
    Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, old,
                                       arith::ConstantIntOp::create(b, i32, splits - 1));
    memref::StoreOp::create(b, arith::ExtUIOp::create(b, i8, last), ldsS, ValueRange{zeroIdx});
    // The last split resets the counter: every other split has counted in.
    auto reset = scf::IfOp::create(b, last, /*withElse=*/false);
    b.setInsertionPointToStart(reset.thenBlock());
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::assign,
                                arith::ConstantIntOp::create(b, i32, 0), counters,
                                ValueRange{tile});
  }
  gpu::BarrierOp::create(b);
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                       memref::LoadOp::create(b, ldsS, ValueRange{zeroIdx}),
                                       arith::ConstantIntOp::create(b, i8, 0));
  auto summer = scf::IfOp::create(b, isLast, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(summer.thenBlock());
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "agent");
  forEachStoredElement(b, acc, f32, col0, ldv, valid, nTail, [&](Value, Value rowIn, Value col) {
    Value sum;
    for (int64_t s = 0; s < splits; ++s) {
      Value v = memref::LoadOp::create(b, ws, ValueRange{slot(idxConst(b, s), rowIn, col)});
      sum = sum ? arith::AddFOp::create(b, sum, v).getResult() : v;
    }
    if (elem != f32)
      sum = arith::TruncFOp::create(b, elem, sum);
    Value at = idxAdd(b, arith::MulIOp::create(b, idxAdd(b, row0, rowIn), ldv), col);
    memref::StoreOp::create(b, sum, base, ValueRange{at});
  });
  return success();
}
