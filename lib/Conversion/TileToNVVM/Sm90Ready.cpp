//===- Sm90Ready.cpp - Ready flags from qdq_mxfp4 to the GEMM -------------===//
//
// gemm_qdqa4w4 starts (programmatic dependent launch) while qdq_mxfp4 still
// writes the activation image, and each output tile reads its rows as soon
// as their 128-row image blocks are written, instead of waiting for the
// whole quantizer (griddepcontrol.wait). The quantizer goes row block by
// row block, and the GEMM's first tiles take the first rows, so they wait
// for a fraction of it and its rest overlaps their K loops.
//
// Per image block the ready buffer holds a count and a flag. Each
// quantizer workgroup, after a proxy fence (its stores are for the GEMM's
// bulk copies, the async proxy) and a barrier that follow its image
// stores, adds 1 to its block's count (thread 0, atom.acq_rel.gpu:
// releasing what the barrier ordered before it); the one that completes
// the block (it knows how many there are: its M, BM and K) resets the
// count and stores the call's epoch in the flag (st.release.gpu,
// cumulative over everything it acquired). The GEMM's thread 0, which
// issues the bulk copies, spins on ld.acquire.gpu of the flags of a tile's
// blocks before the tile's first copies (the prologue; a persistent kernel
// also before each tile's K loop, for the next tile, whose first steps
// that loop issues), then fences the async proxy again. Nothing of this is
// inside the K loop: there it would cost every step. The host numbers the
// calls (epochs, never 0; flags start at 0).
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// The global address of word `index` of the kernel buffer `ready`.
static Value wordPtr(ImplicitLocOpBuilder &b, Value ready, Value index) {
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value base = LLVM::AddrSpaceCastOp::create(b, global, ready);
  Value at = arith::IndexCastUIOp::create(b, b.getI64Type(), index);
  return LLVM::GEPOp::create(b, global, b.getI32Type(), base, ArrayRef<LLVM::GEPArg>{at});
}

static void inlineAsm(ImplicitLocOpBuilder &b, StringRef text, StringRef constraints,
                      ValueRange operands) {
  LLVM::InlineAsmOp::create(b, /*res=*/Type(), operands, b.getStringAttr(text),
                            b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                            LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
}

void Sm90Emitter::signalReady(ImplicitLocOpBuilder &b, tile::QuantizeOp op) {
  Value ready = mapping.lookup(op.getReady());
  tile::LoadOp load = op.getInput().getDefiningOp<tile::LoadOp>();
  Value row0 = mapping.lookup(load.getRow());
  Value m = idxAdd(b, row0, mapping.lookup(load.getValidRows()));
  // Each thread's image stores become visible to the async proxy (the
  // GEMM's bulk copies) before the barrier that orders them before the
  // release.
  inlineAsm(b, "fence.proxy.async.global;", "", ValueRange{});
  gpu::BarrierOp::create(b);
  Value isNull = LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::eq, ready,
                                      LLVM::ZeroOp::create(b, ready.getType()));
  Value go = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0)),
      arith::XOrIOp::create(b, isNull, arith::ConstantIntOp::create(b, 1, 1)));
  auto ifOp = scf::IfOp::create(b, go, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  // The block's workgroups: K / BK per BM rows of it that exist.
  const int64_t blockRows = sm90::kImageBlockRows;
  Value block = idxDiv(b, row0, blockRows);
  Value rows = arith::MinUIOp::create(
      b, arith::SubIOp::create(b, m, idxMul(b, block, blockRows)), idxConst(b, blockRows));
  Value groups = arith::MulIOp::create(b, idxDiv(b, idxAdd(b, rows, cfg.bm - 1), cfg.bm),
                                       idxDiv(b, mapping.lookup(load.getLd()), cfg.bk));
  Value lastOld = arith::IndexCastUIOp::create(b, b.getI32Type(), idxAdd(b, groups, -1));
  Value epoch =
      arith::IndexCastUIOp::create(b, b.getI32Type(), mapping.lookup(op.getReadyEpoch()));
  inlineAsm(b,
            "{\n"
            ".reg .pred p;\n"
            ".reg .b32 old;\n"
            "atom.acq_rel.gpu.global.add.u32 old, [$0], 1;\n"
            "setp.eq.u32 p, old, $2;\n"
            "@p st.relaxed.gpu.global.u32 [$0], 0;\n"
            "@p st.release.gpu.global.u32 [$1], $3;\n"
            "}",
            "l,l,r,r",
            ValueRange{wordPtr(b, ready, idxMul(b, block, 2)),
                       wordPtr(b, ready, idxAdd(b, idxMul(b, block, 2), 1)), lastOld, epoch});
}

void Sm90Emitter::waitReady(ImplicitLocOpBuilder &b, tile::LoadQdqOp op, Value block,
                            Value epoch) {
  // A flag that never gets there (the quantizer failed, or another stream
  // raced for the same weights' scratch) traps after ~2^24 polls (over a
  // second) instead of hanging.
  inlineAsm(b,
            "{\n"
            ".reg .pred p;\n"
            ".reg .b32 v;\n"
            "ready_${:uid}:\n"
            "ld.volatile.global.u32 v, [$0];\n"
            "setp.ne.u32 p, v, $1;\n"
            "@p bra ready_${:uid};\n"
            "fence.acq_rel.gpu;\n"
            "fence.proxy.async.global;\n"
            "}",
            "l,r",
            ValueRange{wordPtr(b, mapping.lookup(op.getReady()),
                               idxAdd(b, idxMul(b, block, 2), 1)),
                       arith::IndexCastUIOp::create(b, b.getI32Type(), epoch)});
}

void Sm90Emitter::waitForTileRows(ImplicitLocOpBuilder &b, tile::LoadQdqOp op, Value tile) {
  auto tileValue = [&](Value v) {
    return tile ? valueForTile(b, v, tile) : mapping.lookup(v);
  };
  const int64_t blockRows = sm90::kImageBlockRows;
  Value block0 = idxDiv(b, tileValue(op.getRow()), blockRows);
  Value valid = tileValue(op.getValidRows());
  Value epoch = mapping.lookup(op.getReadyEpoch());
  Value leader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0));
  for (int64_t blk = 0; blk < std::max<int64_t>(cfg.bm / blockRows, 1); ++blk) {
    Value exists = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                         idxConst(b, blk * blockRows), valid);
    auto ifOp = scf::IfOp::create(b, arith::AndIOp::create(b, leader, exists),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    waitReady(b, op, idxAdd(b, block0, blk), epoch);
  }
}
