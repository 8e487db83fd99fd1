//===- Sm90DecodeKLoop.cpp - The decode variant's K loop (sm_90a) ---------===//
//
// Decode moves the weights and little else, so the variant for it
// (KernelSpec::decode) keeps nothing in the K loop that waits on other
// warps. Each warp reads its own weight fragments (the sm90-mma16 layout
// puts a thread's 16 bytes of a 16-row tile's 128-K chunk at 16-byte unit
// (tile * K/128 + chunk) * 64 + h * 32 + lane, and its scale word at
// (group * K/128 + chunk) * 32 + lane, Kernels/Sm90Pipeline.h) straight
// from global memory into registers, kAhead K steps ahead; and every K step
// of the workgroup has its own stage of activations (BM x BK bf16 of the
// image, a few KiB at decode's BM), all copied at the start.
//
// Prologue: the weight loads of steps 0..kAhead-1 start,
// griddepcontrol.wait (qdq_mxfp4's image is complete), thread 0 starts the
// copies of every step's activations (one mbarrier each). Iteration ks:
// wait for step ks's activations (only the first waits in practice), issue
// its wgmmas on the registers loaded kAhead steps before, start the loads of
// step ks + kAhead (clamped to the last step: the tail reloads it, harmless).
// No barrier and no refill: shared memory is not written again before the
// epilogue, whose first barrier follows the last wgmmas' wait.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// K steps whose weights are in flight per warp: 2 x 8 KiB a BN 128
/// workgroup, enough to cover DRAM latency at decode's 3-4 workgroups per SM.
static constexpr int64_t kAhead = 2;

WeightRegs Sm90Emitter::fetchWeights(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                     tile::LoadWeightOp weight, tile::LoadScalesOp scales,
                                     Value st) {
  // The step's first 128-K chunk, as the loop body would compute it.
  Value iv = arith::AddIOp::create(b, mapping.lookup(loop.getLowerBound()),
                                   arith::MulIOp::create(b, st, mapping.lookup(loop.getStep())));
  Value chunk0 = idxDiv(b, valueAt(b, weight.getCol(), loop, iv), 128);
  const int64_t rowChunks = int64_t(weight.getK()) / 128;
  // Warp w's rows are tiles w * tiles + i of the workgroup's BN / 16, its
  // scales those of 32-row group (w * tiles) / 2 (as loadWeights reads them
  // from a stage).
  const int64_t tiles = cfg.tilesPerWarp();
  Value tile0 = idxAdd(b, idxDiv(b, mapping.lookup(weight.getRow()), 16), idxMul(b, warp, tiles));
  Value group = idxDiv(b, tile0, 2);
  Value words = mapping.lookup(weight.getBase()), scaleWords = mapping.lookup(scales.getBase());
  WeightRegs r;
  for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc) {
    Value chunk = idxAdd(b, chunk0, kc);
    for (int64_t i = 0; i < tiles; ++i) {
      Value base = idxMul(b, idxAdd(b, idxMul(b, idxAdd(b, tile0, i), rowChunks), chunk),
                          sm90::kTileChunkWords / 4);
      for (int64_t h = 0; h < 2; ++h)
        r.words.push_back(
            memref::LoadOp::create(b, words, ValueRange{idxAdd(b, base, idxAdd(b, lane, h * 32))}));
    }
    Value at = idxAdd(
        b, idxMul(b, idxAdd(b, idxMul(b, group, rowChunks), chunk), sm90::kGroupScaleWords), lane);
    r.scales.push_back(memref::LoadOp::create(b, scaleWords, ValueRange{at}));
  }
  return r;
}

LogicalResult Sm90Emitter::lowerDecodeKLoop(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                            tile::LoadQdqOp act, tile::LoadWeightOp weight,
                                            tile::LoadScalesOp scales, ArrayRef<Value> init) {
  if (act.getCol() != weight.getCol())
    return act.emitOpError() << "must load the same K columns as its mxtile.load_weight";
  const sm90::SharedLayout l = cfg.shared();
  Value lb = mapping.lookup(loop.getLowerBound()), ub = mapping.lookup(loop.getUpperBound()),
        step = mapping.lookup(loop.getStep());
  Value steps = arith::DivUIOp::create(b, arith::SubIOp::create(b, ub, lb), step);
  Value last = idxAdd(b, steps, -1);
  auto fetch = [&](Value st) {
    return fetchWeights(b, loop, weight, scales, arith::MinUIOp::create(b, st, last));
  };

  initStages(b);
  // The loop carries kAhead steps' registers, oldest first.
  WeightRegs queue;
  for (int64_t d = 0; d < kAhead; ++d) {
    WeightRegs r = fetch(idxConst(b, d));
    llvm::append_range(queue.words, r.words);
    llvm::append_range(queue.scales, r.scales);
  }
  const size_t nWords = queue.words.size() / kAhead, nScales = queue.scales.size() / kAhead;
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::wait);
  // One stage per step (the layout has `steps` of them).
  for (int64_t st = 0; st < l.stages; ++st)
    issueStage(b, loop, weight, idxConst(b, st), steps, act);

  auto body = [&](Value, Value trip, const WeightRegs &regs,
                  MutableArrayRef<Value> accs) -> WeightRegs {
    waitStage(b, trip);
    WeightRegs now;
    now.words.assign(regs.words.begin(), regs.words.begin() + nWords);
    now.scales.assign(regs.scales.begin(), regs.scales.begin() + nScales);
    Value stageWords = idxAdd(b, idxMul(b, trip, l.stageBytes() / 4), l.stagesOffset() / 4);
    mmaStep(b, now, stageWords, accs);
    WeightRegs next;
    next.words.assign(regs.words.begin() + nWords, regs.words.end());
    next.scales.assign(regs.scales.begin() + nScales, regs.scales.end());
    WeightRegs ahead = fetch(idxAdd(b, trip, kAhead));
    llvm::append_range(next.words, ahead.words);
    llvm::append_range(next.scales, ahead.scales);
    return next;
  };
  accumulators[loop.getResult(0)] =
      tileAccumulators(b, emitStepLoop(b, lb, ub, step, init, queue, body));
  return success();
}
