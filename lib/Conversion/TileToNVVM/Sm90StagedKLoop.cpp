//===- Sm90StagedKLoop.cpp - The K loop on the activation image (sm_90a) --===//
//
// gemm_qdqa4w4 reads activations that qdq_mxfp4 quantized, dequantized and
// wrote in the wgmma core-matrix image (Kernels/Sm90Pipeline.h), so nothing
// is left to convert: each stage receives a step's activations (bulk
// copies) with its weights (TMA), under one mbarrier, and the wgmmas read
// the activations where they land. Threads only dequantize weights.
//
// Prologue: the weights of steps 0..S-2 start, griddepcontrol.wait (the
// image is complete and visible), their activations start, step 0's
// weights are read. Iteration ks:
// issue step ks's wgmmas (registers, stage ks % S; by then this warpgroup's
// wgmmas of step ks-1, the last readers of stage (ks-1) % S, have
// completed); read step ks+1's weights (clamped to the last step); barrier:
// every warpgroup is past step ks-1; start step ks+S-1 into stage
// (ks+S-1) % S = (ks-1) % S. With two stages (S-1 = 1) that is step ks+1,
// so the barrier and its copies come before its weights are read.
// The barrier also keeps the two warpgroups in step, which feeds the
// shared tensor cores best: releasing stages by mbarrier arrivals or
// bar.arrive instead, so they drift apart, was slower at large M
// (measured with mxfp4-bench --preset=seed-dense; see docs/Performance.md).
// After the loop one wait drains the last wgmmas. A persistent kernel
// (Sm90Persistent.cpp) counts stages across its tiles and, once a tile's
// steps run out, issues the next tile's first steps instead.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

LogicalResult Sm90Emitter::lowerStagedKLoop(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                            tile::LoadQdqOp act, tile::LoadWeightOp weight,
                                            ArrayRef<Value> init) {
  // The image's column is the weights' (both are the step's K).
  if (act.getCol() != weight.getCol())
    return act.emitOpError() << "must load the same K columns as its mxtile.load_weight";
  const sm90::SharedLayout l = cfg.shared();
  const int64_t stages = l.stages;
  Value lb = mapping.lookup(loop.getLowerBound()), ub = mapping.lookup(loop.getUpperBound()),
        step = mapping.lookup(loop.getStep());
  // Stream-K runs the segment's steps [segK0, segK1) of the tile
  // (Sm90StreamK.cpp).
  const bool streamK = cfg.streamK;
  if (streamK) {
    ub = idxAdd(b, lb, idxMul(b, segK1, step));
    lb = idxAdd(b, lb, idxMul(b, segK0, step));
  }
  Value steps = arith::DivUIOp::create(b, arith::SubIOp::create(b, ub, lb), step);
  // A persistent kernel counts steps across its tiles (Sm90Persistent.cpp):
  // this tile's step st is the workgroup's step base + st. Stream-K counts
  // them from the workgroup's first iteration.
  const bool persistent = cfg.persistent();
  Value base = persistent ? arith::MulIOp::create(b, tileIter, steps).getResult()
               : streamK  ? segBase
                          : Value();
  auto slot = [&](Value st) { return base ? idxAdd(b, base, st) : st; };
  // Step st's activations, weights and scales start their trip into stage st % S.
  auto issue = [&](Value st, StageParts parts = StageParts::All) {
    if (streamK)
      return issueStreamStep(b, loop, weight, act, slot(st), parts);
    issueStage(b, loop, weight, st, steps, act, parts);
  };
  // Step st of this tile, S - 1 steps ahead; past the last, a persistent
  // kernel's next tile's step st - steps (if it has a next tile), or
  // stream-K's next segment's.
  auto issueAhead = [&](Value st) {
    if (!persistent)
      return issue(st);
    issueStage(b, loop, weight, st, steps, act, StageParts::All, {slot(st), Value(), Value()});
    Value past = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, st, steps);
    Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, nextTile, tileCount);
    issueStage(b, loop, weight, arith::SubIOp::create(b, st, steps), steps, act,
               StageParts::All, {slot(st), nextTile, arith::AndIOp::create(b, past, more)});
  };

  // The prologue's weights start before the wait for the kernel that
  // writes the image (qdq_mxfp4; launched as its programmatic dependent,
  // this kernel may start before it ends), the activations after it. A
  // persistent kernel set its barriers up before the tile loop, and only
  // its first tile has a prologue: later tiles' first steps were issued by
  // the tile before.
  auto prologue = [&] {
    for (int64_t st = 0; st + 1 < stages; ++st)
      issue(idxConst(b, st), StageParts::Weights);
    // The streamed image waits for each chunk instead (Sm90ImageStream.cpp).
    if (!cfg.imageStream)
      NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::wait);
    // Streamed: the image of the prologue's steps, acquired in one wait
    // (Sm90ImageStream.cpp).
    if (cfg.imageStream) {
      waitImageSteps(b, loop, weight, act, idxConst(b, 0), steps);
      gpu::BarrierOp::create(b);
    }
    for (int64_t st = 0; st + 1 < stages; ++st)
      issue(idxConst(b, st), StageParts::Activations);
  };
  if (cfg.tileLoop()) {
    auto firstTile = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tileIter, idxConst(b, 0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(firstTile.thenBlock());
    prologue();
  } else {
    initStages(b);
    prologue();
  }
  WeightRegs first = loadWeights(b, slot(idxConst(b, 0)));

  auto body = [&](Value, Value trip, const WeightRegs &regs,
                  MutableArrayRef<Value> accs) -> WeightRegs {
    // The stage's activations start at its first byte (a word offset from
    // shared byte 0, as mmaStep wants).
    Value stageWords = idxAdd(b, idxMul(b, idxRem(b, slot(trip), stages), l.stageBytes() / 4),
                              l.stagesOffset() / 4);
    // Once it has issued step ks's wgmmas, step ks-1's, the last readers
    // of their stage, have completed (Sm90Wgmma.cpp).
    mmaStep(b, regs, stageWords, accs);
    Value nextTrip = arith::MinUIOp::create(b, idxAdd(b, trip, 1), idxAdd(b, steps, -1));
    // Step ks+S-1 goes into the stage step ks-1 just left, after the
    // barrier (and, streamed, once its image is published).
    Value ahead = idxAdd(b, trip, stages - 1);
    auto refill = [&] {
      if (cfg.imageStream)
        waitImageSteps(b, loop, weight, act, ahead, steps);
      gpu::BarrierOp::create(b);
      issueAhead(ahead);
    };
    if (stages == 2) {
      // That is step ks+1: it can only start now, and is waited for at
      // once (two workgroups per SM hide each other's waits).
      refill();
      return loadWeights(b, slot(nextTrip));
    }
    WeightRegs nextRegs = loadWeights(b, slot(nextTrip));
    refill();
    return nextRegs;
  };
  accumulators[loop.getResult(0)] =
      tileAccumulators(b, emitStepLoop(b, lb, ub, step, init, first, body));
  if (cfg.imageStream)
    countImageReads(b, loop, weight, act, steps);
  if (streamK) // the last step's stage: every wgmma that read it has completed
    outputRegion = idxAdd(
        b, idxMul(b, idxRem(b, slot(idxAdd(b, steps, -1)), stages), l.stageBytes()),
        l.stagesOffset());
  return success();
}
