//===- Sm90Ready.cpp - Chunk-ready counters from qdq_mxfp4 to the GEMM ----===//
//
// gemm_qdqa4w4 starts (programmatic dependent launch) while qdq_mxfp4 still
// writes the activation image, and reads each 128-column chunk as soon as
// every quantizer workgroup of that chunk has written it, instead of
// waiting for the whole quantizer (griddepcontrol.wait). The quantizer runs
// its chunks in order (all row blocks of chunk 0 first), so the GEMM's K
// loop, which needs chunk s at step s, rarely waits.
//
// The counters only grow (one per chunk, never reset): the host adds the
// quantizer's row blocks to its running total per call and passes the total
// as the GEMM's target, compared modulo 2^32. Producer: a workgroup barrier
// after the image stores, then thread 0's red.release.gpu (cumulative over
// the stores the barrier ordered before it). Consumer: the thread that
// issues the chunk's bulk copies spins on ld.acquire.gpu, then a
// fence.proxy.async.global orders its later bulk copies (async proxy)
// after the stores it now sees.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// The global address of counter `chunk` of the kernel buffer `ready`.
static Value counterPtr(ImplicitLocOpBuilder &b, Value ready, Value chunk) {
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value base = LLVM::AddrSpaceCastOp::create(b, global, ready);
  Value at = arith::IndexCastUIOp::create(b, b.getI64Type(), chunk);
  return LLVM::GEPOp::create(b, global, b.getI32Type(), base, ArrayRef<LLVM::GEPArg>{at});
}

static void inlineAsm(ImplicitLocOpBuilder &b, StringRef text, StringRef constraints,
                      ValueRange operands) {
  LLVM::InlineAsmOp::create(b, /*res=*/Type(), operands, b.getStringAttr(text),
                            b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                            LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
}

void Sm90Emitter::signalReady(ImplicitLocOpBuilder &b, tile::QuantizeOp op, Value col) {
  Value ready = mapping.lookup(op.getReady());
  gpu::BarrierOp::create(b);
  Value isNull = LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::eq, ready,
                                      LLVM::ZeroOp::create(b, ready.getType()));
  Value go = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0)),
      arith::XOrIOp::create(b, isNull, arith::ConstantIntOp::create(b, 1, 1)));
  auto ifOp = scf::IfOp::create(b, go, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value chunk0 = idxDiv(b, col, 128);
  for (int64_t c = 0; c < cfg.bk / 128; ++c)
    inlineAsm(b, "red.release.gpu.global.add.u32 [$0], 1;", "l",
              ValueRange{counterPtr(b, ready, idxAdd(b, chunk0, c))});
}

void Sm90Emitter::waitReady(ImplicitLocOpBuilder &b, tile::LoadQdqOp op, Value chunk) {
  Value target = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                              mapping.lookup(op.getReadyTarget()));
  // Counters only grow: reached when (counter - target) as signed is >= 0.
  // A counter that never gets there (the quantizer failed, or another
  // stream raced for the same weights' scratch) traps after ~2^24 polls
  // (over a second) instead of hanging.
  inlineAsm(b,
            "{\n"
            ".reg .pred p;\n"
            ".reg .b32 v, n;\n"
            "mov.u32 n, 0;\n"
            "ready_${:uid}:\n"
            "ld.acquire.gpu.global.u32 v, [$0];\n"
            "sub.s32 v, v, $1;\n"
            "setp.ge.s32 p, v, 0;\n"
            "@p bra done_${:uid};\n"
            "add.u32 n, n, 1;\n"
            "setp.gt.u32 p, n, 16777216;\n"
            "@p trap;\n"
            "nanosleep.u32 64;\n"
            "bra ready_${:uid};\n"
            "done_${:uid}:\n"
            "fence.proxy.async.global;\n"
            "}",
            "l,r", ValueRange{counterPtr(b, mapping.lookup(op.getReady()), chunk), target});
}
