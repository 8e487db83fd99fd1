//===- Sm90KLoop.cpp - The software-pipelined K loop on sm_90a ------------===//
//
// Prologue: the TMA copies of weight steps 0..S-1 start (Sm90Tma.cpp), the
// activations of step 0 are converted into shared buffer 0 (quantized
// inline, or dequantized from MXFP4 for mxtile.load_mx), step 0's weights
// are read into registers, proxy fence, barrier, step S's copy starts.
// Iteration ks: issue the global loads of the activations of step ks+1
// (clamped to the last step, so the tail redoes harmless work instead of
// branching), issue step ks's wgmmas (registers and buffer ks%2; by then
// step ks-1's, the last readers of the other buffer, have completed),
// convert step ks+1's activations into the other buffer while step ks's
// wgmmas run, read step ks+1's weights from their stage, proxy fence,
// barrier, start step ks+1+S's copy into the stage just read. After
// the loop one wait drains the last wgmmas. Kernels on the activation image
// (mxtile.load_qdq) take the staged loop of Sm90StagedKLoop.cpp instead.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

SmallVector<Value> Sm90Emitter::emitStepLoop(ImplicitLocOpBuilder &b, Value lb, Value ub,
                                              Value step, ArrayRef<Value> accInit,
                                              const WeightRegs &first, StepBody body) {
  // Loop-carried: the accumulators, then the next step's weight words and
  // scales (read one step ahead).
  SmallVector<Value> inits(accInit.begin(), accInit.end());
  const size_t nAcc = inits.size(), nWords = first.words.size();
  llvm::append_range(inits, first.words);
  llvm::append_range(inits, first.scales);
  // A do-while loop (scf.while, the body in its "before" region): every K
  // loop runs at least two steps (verifyKernelSpec), and without a
  // zero-trip path the accumulators are only ever defined by wgmmas in the
  // loop; with one (dynamic split-K bounds) ptxas serializes the wgmmas
  // (C7515).
  SmallVector<Value> whileInits{lb};
  llvm::append_range(whileInits, inits);
  SmallVector<Type> types;
  for (Value v : whileInits)
    types.push_back(v.getType());
  auto loop = scf::WhileOp::create(b, types, whileInits);
  SmallVector<Location> locs(types.size(), b.getLoc());
  Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
  Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(before);
    Value iv = before->getArgument(0);
    Value trip = arith::DivUIOp::create(b, arith::SubIOp::create(b, iv, lb), step);
    auto args = before->getArguments().drop_front();
    SmallVector<Value> accs(args.begin(), args.begin() + nAcc);
    WeightRegs regs;
    regs.words.assign(args.begin() + nAcc, args.begin() + nAcc + nWords);
    regs.scales.assign(args.begin() + nAcc + nWords, args.end());
    WeightRegs nextRegs = body(iv, trip, regs, accs);
    Value next = arith::AddIOp::create(b, iv, step);
    SmallVector<Value> carried{next};
    llvm::append_range(carried, accs);
    llvm::append_range(carried, nextRegs.words);
    llvm::append_range(carried, nextRegs.scales);
    Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, next, ub);
    scf::ConditionOp::create(b, more, carried);
    b.setInsertionPointToStart(after);
    scf::YieldOp::create(b, after->getArguments());
  }
  b.setInsertionPointAfter(loop);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0); // the last step's wgmmas
  return SmallVector<Value>(loop.getResults().begin() + 1, loop.getResults().begin() + 1 + nAcc);
}

LogicalResult Sm90Emitter::lowerKLoop(ImplicitLocOpBuilder &b, scf::ForOp loop) {
  tile::LoadOp load;
  tile::QuantizeOp quant;
  tile::LoadMxOp loadMx;
  tile::LoadQdqOp loadQdq;
  tile::LoadWeightOp weight;
  tile::LoadScalesOp scales;
  tile::ScaledMmaOp mma;
  auto expected = [&](Operation *op) {
    return op->emitOpError() << "does not fit the K loop the sm_90a lowering pipelines: one "
                                "mxtile.load -> mxtile.quantize, one mxtile.load_mx or one "
                                "mxtile.load_qdq, one "
                                "load_weight and load_scales, one scaled_mma yielded as the "
                                "accumulator";
  };
  auto once = [&](auto &slot, auto op) -> LogicalResult {
    if (slot)
      return expected(op);
    slot = op;
    return success();
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    LogicalResult r = success();
    if (auto x = dyn_cast<tile::LoadOp>(op))
      r = once(load, x);
    else if (auto x = dyn_cast<tile::QuantizeOp>(op))
      r = once(quant, x);
    else if (auto x = dyn_cast<tile::LoadMxOp>(op))
      r = once(loadMx, x);
    else if (auto x = dyn_cast<tile::LoadQdqOp>(op))
      r = once(loadQdq, x);
    else if (auto x = dyn_cast<tile::LoadWeightOp>(op))
      r = once(weight, x);
    else if (auto x = dyn_cast<tile::LoadScalesOp>(op))
      r = once(scales, x);
    else if (auto x = dyn_cast<tile::ScaledMmaOp>(op))
      r = once(mma, x);
    else if (!isa<arith::ArithDialect>(op.getDialect()) || op.getNumRegions() != 0)
      r = expected(&op);
    if (failed(r))
      return failure();
  }
  // The A operand: bf16 quantized inline, MXFP4 as it is, or MXFP4 stored
  // dequantized.
  const bool inlineQuant = load && quant && !loadMx && !loadQdq;
  const bool mxOnly = loadMx && !load && !quant && !loadQdq;
  const bool qdqOnly = loadQdq && !load && !quant && !loadMx;
  if (!(inlineQuant || mxOnly || qdqOnly) || !weight || !scales || !mma)
    return expected(loop);
  Value aData = inlineQuant ? quant.getData()
                : mxOnly    ? loadMx.getResult()
                            : loadQdq.getResult();
  Value aScales = inlineQuant ? quant.getScales()
                  : mxOnly    ? loadMx.getResultScales()
                              : loadQdq.getResultScales();
  if (loop.getNumRegionIterArgs() != 1 || (inlineQuant && quant.getInput() != load.getResult()) ||
      mma.getA() != aData || mma.getAScales() != aScales || mma.getB() != weight.getResult() ||
      mma.getBScales() != scales.getResult() || mma.getAcc() != loop.getRegionIterArg(0) ||
      loop.getBody()->getTerminator()->getOperand(0) != mma.getResult())
    return expected(loop);
  if (inlineQuant && !load.getResult().getType().getElementType().isBF16())
    return load.emitOpError() << "inline quantization on sm_90a takes bf16 input";
  if (scales.getLayout() != tile::ScaleLayoutKind::sm90_mma16)
    return scales.emitOpError() << "on sm_90a weight scales must use the sm90_mma16 layout";
  auto init = accumulators.find(loop.getInitArgs()[0]);
  if (init == accumulators.end())
    return loop.emitOpError() << "must start from an mxtile.zero accumulator";

  Value lb = mapping.lookup(loop.getLowerBound()), ub = mapping.lookup(loop.getUpperBound()),
        step = mapping.lookup(loop.getStep());
  if (!weight.getDescriptors())
    return weight.emitOpError() << "on sm_90a weights are fetched by TMA: mxtile.load_weight "
                                   "needs the descriptors operand";
  if (inlineQuant && cfg.warpSplitK)
    return lowerWarpSplitKLoop(b, loop, load, quant, weight, scales);
  if (qdqOnly)
    return lowerStagedKLoop(b, loop, loadQdq, weight, flattenAccumulators(b, init->second));
  if (inlineQuant && cfg.decodeSteps)
    return lowerDecodeKLoop(b, loop, load, quant, weight, scales,
                            flattenAccumulators(b, init->second));
  auto colAt = [&](Value iv) {
    return valueAt(b, inlineQuant ? load.getCol() : loadMx.getCol(), loop, iv);
  };
  // Global loads of a step's activations, then their conversion into smem.
  auto loadA = [&](Value col) {
    return inlineQuant ? loadActivations(b, load, col) : loadMxActivations(b, loadMx, col);
  };
  auto storeA = [&](ArrayRef<Value> chunks, Value col, Value buffer) {
    if (inlineQuant)
      quantizeToSmem(b, quant, chunks, col, buffer);
    else
      dequantizeToSmem(b, chunks, buffer);
  };

  const int64_t stages = cfg.shared().stages;
  Value last = arith::SubIOp::create(b, ub, step);
  Value steps = arith::DivUIOp::create(b, arith::SubIOp::create(b, ub, lb), step);
  // The next step's K, clamped to the last step: the tail redoes harmless
  // activation loads instead of branching.
  auto nextOf = [&](Value iv) {
    return arith::MinUIOp::create(b, arith::AddIOp::create(b, iv, step), last).getResult();
  };
  // Step st's weights (and scales) start their trip into stage st % S.
  auto issue = [&](Value st) { issueStage(b, loop, weight, st, steps); };

  // Prologue: S steps of weights in flight, step 0's activations converted
  // and its weights read; once every thread has read stage 0 it refills.
  initStages(b);
  for (int64_t st = 0; st < stages; ++st)
    issue(idxConst(b, st));
  storeA(loadA(colAt(lb)), colAt(lb), idxConst(b, 0));
  WeightRegs first = loadWeights(b, idxConst(b, 0));
  fenceProxyAsync(b);
  gpu::BarrierOp::create(b);
  issue(idxConst(b, stages));

  auto body = [&](Value iv, Value trip, const WeightRegs &regs,
                  MutableArrayRef<Value> accs) -> WeightRegs {
    Value next = nextOf(iv);
    SmallVector<Value> nextChunks = loadA(colAt(next));
    Value cur = idxMul(b, idxRem(b, trip, 2), cfg.wordsPerBuffer());
    Value other = arith::SubIOp::create(b, idxConst(b, cfg.wordsPerBuffer()), cur);
    // Once it has issued step ks's wgmmas, step ks-1's, the last readers of
    // `other`, have completed (Sm90Wgmma.cpp); step ks's keep running
    // through the conversion and into the next step.
    mmaStep(b, regs, cur, accs);
    storeA(nextChunks, colAt(next), other);
    // After the conversion, which then has these registers to itself.
    Value nextTrip = arith::MinUIOp::create(b, idxAdd(b, trip, 1), idxAdd(b, steps, -1));
    WeightRegs nextRegs = loadWeights(b, nextTrip);
    fenceProxyAsync(b);
    gpu::BarrierOp::create(b);
    // Every thread has read step ks+1's stage: it takes step ks+1+S.
    issue(idxAdd(b, trip, 1 + stages));
    return nextRegs;
  };
  accumulators[loop.getResult(0)] = tileAccumulators(
      b, emitStepLoop(b, lb, ub, step, flattenAccumulators(b, init->second), first, body));
  return success();
}
