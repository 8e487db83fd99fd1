//===- Sm90DecodeKLoop.cpp - The decode variant's K loop (sm_90a) ---------===//
//
// Decode moves the weights and little else, so the variant for it
// (KernelSpec::decode) keeps nothing in the K loop that waits on other
// warps. Each warp reads its own weight fragments (the sm90-mma16 layout
// puts a thread's 16 bytes of a 16-row tile's 128-K chunk at 16-byte unit
// (tile * K/128 + chunk) * 64 + h * 32 + lane, and its scale word at
// (group * K/128 + chunk) * 32 + lane, Kernels/Sm90Pipeline.h) straight
// from global memory into registers, up to kMaxAhead K steps ahead; and the
// workgroup quantizes the activations of all its K steps first, each step
// into its own buffer (BM x BK bf16, a few KiB at decode's BM).
//
// Prologue: the weight loads of steps 0..kAhead-1 start, then the
// activations' loads (a batch of steps at a time) and their quantization
// into shared memory, the batch's steps interleaved (Sm90Quantize.cpp,
// quantizeSteps), proxy fence, one barrier.
// Step ks: issue its wgmmas on the registers loaded kAhead steps before and
// buffer ks, start the loads of step ks + kAhead into the same slot. At BN
// 64 x BK 128 with up to kMaxUnrolledSteps steps (the table's 7168x4224
// and 1536x7168 tiles take 3-4) the steps are unrolled: a loop carries the
// slots as a queue, and shifting it is a register move of the load just
// issued, which waits for that load (ncu showed stall samples on such a
// move at one split). Unrolled, those two points ran faster; BK 256
// (7168x768, 3 steps) slower and BN 128 spilled under its register cap
// (mxfp4-bench --preset=seed-dense; see docs/Performance.md), so other
// tiles keep the queue, the loads clamped to the last step (the tail
// reloads it, harmless). No barrier: shared
// memory is not written again before the epilogue, whose first barrier
// follows the last wgmmas' wait. With inline quantization in the K loop
// instead (Sm90KLoop.cpp) each decode step waits for the one warp whose
// rows exist (M = 1) to load and quantize the next step's activations.
//
// Decode groups (Config::decodeGroups = G > 1): warpgroup q runs all of
// the above on steps [q S, (q + 1) S) of the workgroup's G S, with its own
// ids and named barrier; sumDecodeGroups then hands the partial tiles to
// the first warpgroup, which alone runs the epilogue.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// K steps whose weights are in flight per warp (at most; fewer when the
/// workgroup has fewer steps): with the table's 3-4 steps a split, every
/// step's weights start before the activations are quantized. Against 2
/// ahead, faster at every decode point of the seed, at an 80-register cap
/// (TileToNVVM.cpp; at 72 the fourth step spilled and ptxas serialized the
/// wgmmas, C7512): measured with mxfp4-bench --preset=seed-dense; see
/// docs/Performance.md.
static constexpr int64_t kMaxAhead = 4;
/// Activation chunks (16-byte loads) a thread has in flight while the
/// prologue quantizes. At 8 the 8 steps of BM 8 x 7 splits (8448x7168)
/// spilled under the then 72-register cap and ptxas serialized the wgmmas
/// (C7512); at 4 they do not (nor under today's 80 with four steps ahead),
/// and the table's tiles (3-4 steps) ran the same (mxfp4-bench
/// --preset=seed-dense / model-dense; see docs/Performance.md).
static constexpr int64_t kBatchChunks = 4;
/// K steps up to which the decode loop of BN 64 x BK 128 is unrolled whole.
static constexpr int64_t kMaxUnrolledSteps = 16;

void Sm90Emitter::loadWeightFragments(ImplicitLocOpBuilder &b, Value words, Value tile,
                                      int64_t rowChunks, Value chunk,
                                      SmallVectorImpl<Value> &out) {
  Value base = idxMul(b, idxAdd(b, idxMul(b, tile, rowChunks), chunk), sm90::kTileChunkWords / 4);
  for (int64_t h = 0; h < 2; ++h)
    out.push_back(
        memref::LoadOp::create(b, words, ValueRange{idxAdd(b, base, idxAdd(b, lane, h * 32))}));
}

WeightRegs Sm90Emitter::fetchWeights(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                     tile::LoadWeightOp weight, tile::LoadScalesOp scales,
                                     Value st) {
  // The step's first 128-K chunk, as the loop body would compute it.
  Value chunk0 = idxDiv(b, valueAtStep(b, weight.getCol(), loop, st), 128);
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
    for (int64_t i = 0; i < tiles; ++i)
      loadWeightFragments(b, words, idxAdd(b, tile0, i), rowChunks, chunk, r.words);
    Value at = idxAdd(
        b, idxMul(b, idxAdd(b, idxMul(b, group, rowChunks), chunk), sm90::kGroupScaleWords), lane);
    r.scales.push_back(memref::LoadOp::create(b, scaleWords, ValueRange{at}));
  }
  return r;
}

LogicalResult Sm90Emitter::lowerDecodeKLoop(ImplicitLocOpBuilder &b, scf::ForOp loop,
                                            tile::LoadOp load, tile::QuantizeOp quant,
                                            tile::LoadWeightOp weight, tile::LoadScalesOp scales,
                                            ArrayRef<Value> init) {
  // Warpgroup q of G takes the S = steps / G steps from q S on, with the
  // ids of a workgroup of one warpgroup and its own named barrier (1 + q).
  const int64_t groups = cfg.decodeGroups, steps = cfg.decodeSteps / groups;
  const Value blockTid = tid, blockWarp = warp;
  Value group = idxConst(b, 0), first = group;
  if (groups > 1) {
    group = idxDiv(b, tid, cfg.threads());
    first = idxMul(b, group, steps);
    tid = idxRem(b, tid, cfg.threads());
    warp = idxRem(b, warp, cfg.threads() / 32);
  }
  auto stepAt = [&](int64_t st) { return idxAdd(b, first, st); };
  auto bufferAt = [&](Value st) { return idxMul(b, st, cfg.wordsPerBuffer()); };
  Value lb = mapping.lookup(loop.getLowerBound()), step = mapping.lookup(loop.getStep());
  Value last = stepAt(steps - 1);
  const int64_t kAhead = std::min(kMaxAhead, steps);
  auto fetch = [&](Value st) {
    return fetchWeights(b, loop, weight, scales, arith::MinUIOp::create(b, st, last));
  };
  auto colAt = [&](int64_t st) { return valueAtStep(b, load.getCol(), loop, stepAt(st)); };

  // The registers of the kAhead steps in flight, oldest first; their loads
  // start before anything else.
  SmallVector<WeightRegs> slots;
  for (int64_t d = 0; d < kAhead; ++d)
    slots.push_back(fetch(stepAt(d)));
  // Every step's activations (the spec makes the splits' step counts equal,
  // so the count is the attribute's), quantized into buffer st; the loads
  // of a batch of steps go out together (at most kBatchChunks 16-byte loads
  // a thread in flight) before any is quantized.
  const int64_t stepsPerBatch = std::max<int64_t>(1, kBatchChunks / cfg.quantChunks());
  for (int64_t s0 = 0; s0 < steps; s0 += stepsPerBatch) {
    const int64_t s1 = std::min(steps, s0 + stepsPerBatch);
    SmallVector<SmallVector<Value>> chunks;
    for (int64_t st = s0; st < s1; ++st)
      chunks.push_back(loadActivations(b, load, colAt(st)));
    SmallVector<StepChunks> batch;
    for (int64_t st = s0; st < s1; ++st)
      batch.push_back({chunks[st - s0], colAt(st), bufferAt(stepAt(st))});
    quantizeSteps(b, quant, batch);
  }
  fenceProxyAsync(b);
  groupBarrier(b, group);

  if (steps <= kMaxUnrolledSteps && cfg.tilesPerWarp() == 1 && cfg.chunksPerStep() == 1) {
    SmallVector<Value> accs(init.begin(), init.end());
    for (int64_t st = 0; st < steps; ++st) {
      WeightRegs &slot = slots[st % kAhead];
      mmaStep(b, slot, bufferAt(stepAt(st)), accs);
      if (st + kAhead < steps)
        slot = fetchWeights(b, loop, weight, scales, stepAt(st + kAhead));
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0); // the last step's wgmmas
    accumulators[loop.getResult(0)] = tileAccumulators(b, accs);
  } else {
    // The loop carries the slots as one queue, oldest first.
    WeightRegs queue;
    for (const WeightRegs &r : slots) {
      llvm::append_range(queue.words, r.words);
      llvm::append_range(queue.scales, r.scales);
    }
    const size_t nWords = slots[0].words.size(), nScales = slots[0].scales.size();
    auto body = [&](Value, Value trip, const WeightRegs &regs,
                    MutableArrayRef<Value> accs) -> WeightRegs {
      WeightRegs now;
      now.words.assign(regs.words.begin(), regs.words.begin() + nWords);
      now.scales.assign(regs.scales.begin(), regs.scales.begin() + nScales);
      Value st = idxAdd(b, first, trip);
      mmaStep(b, now, bufferAt(st), accs);
      WeightRegs next;
      next.words.assign(regs.words.begin() + nWords, regs.words.end());
      next.scales.assign(regs.scales.begin() + nScales, regs.scales.end());
      WeightRegs ahead = fetch(idxAdd(b, st, kAhead));
      llvm::append_range(next.words, ahead.words);
      llvm::append_range(next.scales, ahead.scales);
      return next;
    };
    Value groupLb = idxAdd(b, lb, idxMul(b, first, step));
    Value groupUb = idxAdd(b, groupLb, idxMul(b, step, idxConst(b, steps)));
    accumulators[loop.getResult(0)] =
        tileAccumulators(b, emitStepLoop(b, groupLb, groupUb, step, init, queue, body));
  }
  tid = blockTid;
  warp = blockWarp;
  if (groups > 1)
    sumDecodeGroups(b, loop, group, steps);
  return success();
}

void Sm90Emitter::groupBarrier(ImplicitLocOpBuilder &b, Value group) {
  if (cfg.decodeGroups == 1) {
    gpu::BarrierOp::create(b);
    return;
  }
  auto i32 = b.getI32Type();
  Value id = arith::IndexCastUIOp::create(b, i32, idxAdd(b, group, 1));
  NVVM::BarrierOp::create(b, Type(), id, arith::ConstantIntOp::create(b, cfg.threads(), 32),
                          NVVM::BarrierReductionAttr(), Value());
}

void Sm90Emitter::sumDecodeGroups(ImplicitLocOpBuilder &b, scf::ForOp loop, Value group,
                                  int64_t groupSteps) {
  // Warpgroup q's partial tile goes to its first step's buffers, which no
  // other warpgroup reads, once its own wgmmas have read them all (its
  // barrier): vector v of thread x at words (v * threads + x) * 4 of them
  // (a tile of BN x BM f32 takes at most the two steps' BM x BK bf16 every
  // warpgroup has).
  SmallVector<Value> &tiles = accumulators[loop.getResult(0)];
  auto v4f32 = VectorType::get({4}, b.getF32Type());
  auto v4i32 = VectorType::get({4}, b.getI32Type());
  Value local = idxRem(b, tid, cfg.threads());
  auto at = [&](Value q, int64_t v) {
    return idxAdd(b, idxMul(b, q, groupSteps * cfg.wordsPerBuffer()),
                  idxMul(b, idxAdd(b, local, v * cfg.threads()), 4));
  };
  assert(int64_t(tiles.size()) * cfg.threads() * 4 <= groupSteps * cfg.wordsPerBuffer() &&
         "a warpgroup's partial tile exceeds its activation buffers");
  groupBarrier(b, group);
  Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, group, idxConst(b, 0));
  {
    Value other = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, group, idxConst(b, 0));
    auto others = scf::IfOp::create(b, other, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(others.thenBlock());
    for (size_t v = 0; v < tiles.size(); ++v)
      vector::StoreOp::create(b, vector::BitCastOp::create(b, v4i32, tiles[v]), smem,
                              ValueRange{at(group, int64_t(v))});
  }
  gpu::BarrierOp::create(b);
  // The first warpgroup adds the others' tiles to its own in warpgroup
  // order (as split-K sums its splits) and runs the epilogue, whose first
  // barrier orders these loads before its own shared stores; the rest of
  // the kernel is lowered inside this scf.if, the return after it.
  firstGroupOnly = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  b.setInsertionPointToStart(firstGroupOnly.thenBlock());
  for (size_t v = 0; v < tiles.size(); ++v)
    for (int64_t q = 1; q < cfg.decodeGroups; ++q) {
      Value part =
          vector::LoadOp::create(b, v4i32, smem, ValueRange{at(idxConst(b, q), int64_t(v))});
      tiles[v] = arith::AddFOp::create(b, tiles[v], vector::BitCastOp::create(b, v4f32, part));
    }
}
