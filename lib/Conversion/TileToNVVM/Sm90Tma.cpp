//===- Sm90Tma.cpp - Weight stages fed by TMA on sm_90a --------------------===//
//
// One mbarrier per stage, initialised with an arrival count of 1: thread 0
// arms it with arrive.expect_tx(stage bytes) and starts the stage's bulk
// tensor copies (per 128-K chunk one weight box and one scale box,
// Kernels/Sm90Pipeline.h); the copies' complete_tx ends the phase. Step st
// uses stage st % S in phase (st / S) % 2, so every thread waits with
// try_wait.parity on that parity. A stage is refilled only after a
// workgroup barrier that follows every thread's reads of it (Sm90KLoop.cpp,
// Sm90StagedKLoop.cpp). Kernels on the activation image also copy the
// step's activations into the front of the stage, in the same phase.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Suspend-time hint of the barrier waits (ns), as CUTLASS uses.
static constexpr int64_t kWaitTicks = 0x989680;

Value Sm90Emitter::sharedPtr(ImplicitLocOpBuilder &b, Value offset) {
  Value addr = arith::AddIOp::create(b, smemBase,
                                     arith::IndexCastUIOp::create(b, b.getI64Type(), offset));
  return LLVM::IntToPtrOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
}

void Sm90Emitter::initStages(ImplicitLocOpBuilder &b) {
  const sm90::SharedLayout l = cfg.shared();
  Value isLeader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0));
  auto ifOp = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value one = arith::ConstantIntOp::create(b, 1, 32);
    for (int64_t s = 0; s < l.stages; ++s)
      NVVM::MBarrierInitOp::create(b, sharedPtr(b, idxConst(b, l.barriersOffset() + 8 * s)), one,
                                   Value());
    // The async proxy (TMA's complete_tx) must see the initialised barriers.
    NVVM::FenceMbarrierInitOp::create(b);
    fenceProxyAsync(b);
  }
  gpu::BarrierOp::create(b);
}

void Sm90Emitter::issueStage(ImplicitLocOpBuilder &b, scf::ForOp loop, tile::LoadWeightOp w,
                             Value st, Value steps, tile::LoadQdqOp act, StageParts parts,
                             StageTarget target) {
  const sm90::SharedLayout l = cfg.shared();
  Value go = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idxConst(b, 0)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, st, steps));
  if (target.enable)
    go = arith::AndIOp::create(b, go, target.enable);
  auto ifOp = scf::IfOp::create(b, go, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());

  auto i32 = b.getI32Type();
  auto toI32 = [&](Value v) { return arith::IndexCastUIOp::create(b, i32, v).getResult(); };
  // The step's first K element, as the loop body would compute it.
  Value chunk0 = idxDiv(b, valueAtStep(b, w.getCol(), loop, st), 128);

  Value stage = idxRem(b, target.slot ? target.slot : st, l.stages);
  Value bar = sharedPtr(b, idxAdd(b, idxMul(b, stage, 8), l.barriersOffset()));
  // The tile's rows of weights and activations (another tile's in a
  // persistent kernel's look-ahead).
  auto tileValue = [&](Value v) {
    return target.tile ? valueForTile(b, v, target.tile) : mapping.lookup(v);
  };
  // The whole stage's bytes, before any of its copies can complete.
  if (parts != StageParts::Activations)
    NVVM::MBarrierArriveExpectTxOp::create(b, Type(), bar,
                                           arith::ConstantIntOp::create(b, l.stageBytes(), 32),
                                           NVVM::MemScopeKindAttr(), BoolAttr(), Value());
  Value stageStart = idxAdd(b, idxMul(b, stage, l.stageBytes()), l.stagesOffset());
  if (parts != StageParts::Activations) {
    // The kernel argument is a plain global pointer (TileToNVVM.cpp); BN
    // 64 and 192 take the second pair of descriptors (Sm90Pipeline.h).
    Value weightMap = mapping.lookup(w.getDescriptors());
    if (const int64_t offset = sm90::descriptorOffset(cfg.bn))
      weightMap = LLVM::GEPOp::create(b, weightMap.getType(), b.getI8Type(), weightMap,
                                      ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    Value scaleMap = LLVM::GEPOp::create(b, weightMap.getType(), b.getI8Type(), weightMap,
                                         ArrayRef<LLVM::GEPArg>{sm90::kDescriptorBytes});
    Value n0 = tileValue(w.getRow());
    Value tile = toI32(idxDiv(b, n0, 16)), group = toI32(idxDiv(b, n0, 32));
    Value zero = arith::ConstantIntOp::create(b, 0, 32);
    auto mode = NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE);
    auto copy = [&](int64_t dstOffset, Value map, Value chunk, Value outer) {
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, sharedPtr(b, idxAdd(b, stageStart, dstOffset)), map, ValueRange{zero, chunk, outer},
          bar, ValueRange{}, Value(), Value(), mode, b.getBoolAttr(true),
          NVVM::CTAGroupKindAttr(), Value());
    };
    // BN 192 takes three BN 64 boxes a chunk, one after the other, so the
    // stage holds its 12 tiles and 6 scale groups in order.
    const int64_t rows = sm90::boxRows(cfg.bn);
    for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc) {
      Value chunk = toI32(idxAdd(b, chunk0, kc));
      for (int64_t box = 0; box < cfg.bn / rows; ++box) {
        Value boxTile = tile, boxGroup = group;
        if (box) {
          boxTile =
              arith::AddIOp::create(b, tile, arith::ConstantIntOp::create(b, box * rows / 16, 32));
          boxGroup =
              arith::AddIOp::create(b, group, arith::ConstantIntOp::create(b, box * rows / 32, 32));
        }
        copy(l.weightsInStage() + kc * l.weightBox() + box * sm90::weightBoxBytes(rows), weightMap,
             chunk, boxTile);
        copy(l.scalesInStage() + kc * l.scaleBox() + box * sm90::scaleBoxBytes(rows), scaleMap,
             chunk, boxGroup);
      }
    }
  }
  if (!act || parts == StageParts::Weights)
    return;
  // The activations: per chunk and MMA step, the tile's BM x 32-byte slab of
  // its 128-row image block, to the stage's slab (chunk, s) (one 32 KiB copy
  // per chunk when BM is the whole block; BM 256: each of its two blocks'
  // 4 KiB slabs to its half of the stage's 8 KiB slab; BM 192: the rows left
  // in the first block, then the rest from the next one).
  Value m0 = tileValue(act.getRow());
  // The image is a plain pointer argument (TileToNVVM.cpp): 64-bit
  // addresses, which the 32-bit index type cannot hold.
  auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value image = LLVM::AddrSpaceCastOp::create(b, global, mapping.lookup(act.getData()));
  Value block0 = idxDiv(b, m0, sm90::kImageBlockRows);
  Value groupBytes = idxMul(b, idxDiv(b, idxRem(b, m0, sm90::kImageBlockRows), 8), 256);
  const int64_t slabBytes = cfg.slabBytes(), imageSlabBytes = sm90::kImageBlockRows * 32;
  auto copy = [&](Value block, int64_t kc, int64_t s, Value offset, Value to, Value bytes) {
    Value slab0 = imageSlab0(b, block, mapping.lookup(act.getLd()), idxAdd(b, chunk0, kc));
    Value from = arith::IndexCastUIOp::create(
        b, b.getI64Type(), idxAdd(b, idxMul(b, idxAdd(b, slab0, s), imageSlabBytes), offset));
    Value src = LLVM::GEPOp::create(b, global, b.getI8Type(), image, ArrayRef<LLVM::GEPArg>{from});
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, sharedPtr(b, idxAdd(b, stageStart, to)), src, bar,
        arith::IndexCastUIOp::create(b, b.getI32Type(), bytes), Value(), Value());
  };
  if (cfg.bm > sm90::kImageBlockRows && cfg.bm % sm90::kImageBlockRows != 0) {
    // BM 192: a tile starts at row 0 or 64 of a block and always reaches
    // into the next one. Per step, the rows left in the first block (the
    // group offset is 32 bytes a row), then the rest from the next one.
    Value first = arith::SubIOp::create(b, idxConst(b, imageSlabBytes), groupBytes);
    Value second = idxAdd(b, groupBytes, slabBytes - imageSlabBytes);
    Value zero = idxConst(b, 0);
    for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc)
      for (int64_t s = 0; s < 8; ++s) {
        Value to = idxConst(b, (kc * 8 + s) * slabBytes);
        copy(block0, kc, s, groupBytes, to, first);
        copy(idxAdd(b, block0, 1), kc, s, zero, idxAdd(b, to, first), second);
      }
    return;
  }
  // BM 128 takes a whole block (one copy of its 8 slabs per chunk), BM 256
  // two (per step, each block's slab to its half of the stage's slab).
  const bool whole = cfg.bm == sm90::kImageBlockRows;
  const int64_t blocks = std::max<int64_t>(cfg.bm / sm90::kImageBlockRows, 1);
  const int64_t bytes = whole ? 8 * slabBytes : (blocks > 1 ? imageSlabBytes : slabBytes);
  for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc)
    for (int64_t blk = 0; blk < blocks; ++blk)
      for (int64_t s = 0; s < (whole ? 1 : 8); ++s)
        copy(idxAdd(b, block0, blk), kc, s, groupBytes,
             idxConst(b, (kc * 8 + s) * slabBytes + blk * imageSlabBytes), idxConst(b, bytes));
}

WeightRegs Sm90Emitter::loadWeights(ImplicitLocOpBuilder &b, Value st) {
  const sm90::SharedLayout l = cfg.shared();
  Value stage = idxRem(b, st, l.stages);
  Value parity = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                              idxRem(b, idxDiv(b, st, l.stages), 2));
  NVVM::MBarrierTryWaitParityOp::create(
      b, sharedPtr(b, idxAdd(b, idxMul(b, stage, 8), l.barriersOffset())), parity,
      arith::ConstantIntOp::create(b, kWaitTicks, 32));
  // Warp w's rows are tiles w * tiles + i of the stage's BN / 16 (16-row
  // tiles of 1 KiB: 16-byte unit (tile * 2 + h) * 32 + lane) and scale group
  // w * tiles / 2 of BN / 32 (32 words each).
  const int64_t tiles = cfg.tilesPerWarp();
  Value tile0 = idxMul(b, warp, tiles);
  Value group = idxDiv(b, tile0, 2);
  Value vecStage = idxAdd(b, idxMul(b, stage, l.stageBytes() / 16), l.weightsInStage() / 16);
  Value wordStage = idxAdd(b, idxMul(b, stage, l.stageBytes() / 4), l.scalesInStage() / 4);
  WeightRegs r;
  for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc) {
    for (int64_t i = 0; i < tiles; ++i)
      for (int64_t h = 0; h < 2; ++h) {
        Value unit = idxAdd(b, idxMul(b, idxAdd(b, tile0, i), sm90::kTileChunkWords / 4), lane);
        Value at = idxAdd(b, vecStage, idxAdd(b, unit, kc * l.weightBox() / 16 + h * 32));
        r.words.push_back(memref::LoadOp::create(b, stageVectors, ValueRange{at}));
      }
    Value at = idxAdd(b, wordStage,
                      idxAdd(b, idxMul(b, group, sm90::kGroupScaleWords),
                             idxAdd(b, lane, kc * l.scaleBox() / 4)));
    r.scales.push_back(memref::LoadOp::create(b, stageWords, ValueRange{at}));
  }
  return r;
}
