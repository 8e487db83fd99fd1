//===- TileToAMDGPU.cpp - Lower mxtile kernels to amdgpu/rocdl ------------===//
//
// Outlines every `mxtile.kernel` func.func into a gpu.func inside a gpu.module
// targeting the chip, then walks the body in order with a KernelEmitter.
// Global buffers become static-shaped 1-D memrefs in the global address space
// (the bare-pointer calling convention needs static shapes; the size is
// nominal, real extents come from the kernel's index arguments).
//
//===----------------------------------------------------------------------===//

#include "AmdLowering.h"
#include "mxfp4/Conversion/GroupBlockGuard.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/KernelOutlining.h"
#include "mxfp4/Conversion/SimtOutlining.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mxfp4::tile {
#define GEN_PASS_DEF_TILETOAMDGPU
#include "mxfp4/Dialect/Tile/TilePasses.h.inc"
} // namespace mxfp4::tile

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::amd;

/// Elements of the nominal static shape given to global buffers.
static constexpr int64_t kNominalElements = int64_t(1) << 30;

//===----------------------------------------------------------------------===//
// The prologue
//===----------------------------------------------------------------------===//

void KernelEmitter::emitPrologue(ImplicitLocOpBuilder &b) {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = idxRem(b, tid, cfg.wave);
  // tid / wave is uniform per wave, but LLVM cannot prove it: readfirstlane
  // puts the wave's weight addressing in scalar registers.
  Value w = arith::IndexCastOp::create(b, b.getI32Type(), idxDiv(b, tid, cfg.wave));
  w = ROCDL::ReadfirstlaneOp::create(b, b.getI32Type(), w);
  wave = arith::IndexCastOp::create(b, b.getIndexType(), w);
  l16 = idxRem(b, lane, 16);
  lgroup = idxDiv(b, lane, 16);
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::lowerFor(ImplicitLocOpBuilder &b, scf::ForOp op) {
  // Only accumulators may be carried: they flatten to their per-lane parts.
  SmallVector<Value> inits;
  SmallVector<unsigned> partsPerArg;
  for (Value init : op.getInitArgs()) {
    if (!isa<tile::TileType>(init.getType())) {
      inits.push_back(mapping.lookup(init));
      partsPerArg.push_back(0);
      continue;
    }
    Accumulator *acc = handle<Accumulator>(init);
    if (!acc)
      return op.emitOpError() << "may only carry accumulator tiles (from mxtile.zero or "
                                 "mxtile.scaled_mma) across iterations";
    llvm::append_range(inits, acc->parts);
    partsPerArg.push_back(acc->parts.size());
  }
  Value lb = mapping.lookup(op.getLowerBound()), ub = mapping.lookup(op.getUpperBound()),
        step = mapping.lookup(op.getStep());
  auto newFor = scf::ForOp::create(b, lb, ub, step, inits);
  // Keep the K loop rolled: fully unrolling a short loop (K = 768) raised
  // VGPR use past the occupancy budget and sank MMAs into the store branches.
  newFor->setAttr("loop_annotation",
                  parseAttribute("#llvm.loop_annotation<unroll = <disable = true>>",
                                 b.getContext()));
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(newFor.getBody());
    mapping.map(op.getInductionVar(), newFor.getInductionVar());
    // LDS stage = trip index % 2: one barrier per K step suffices.
    Value trip = arith::DivUIOp::create(
        b, arith::SubIOp::create(b, newFor.getInductionVar(), lb), step);
    Value parity = idxRem(b, trip, 2);
    stageA = idxMul(b, parity, cfg.aDataBytes());
    stageS = idxMul(b, parity, cfg.aScaleBytes());
    unsigned next = 0;
    for (auto [arg, parts] : llvm::zip(op.getRegionIterArgs(), partsPerArg)) {
      if (parts == 0) {
        mapping.map(arg, newFor.getRegionIterArg(next++));
        continue;
      }
      Accumulator acc;
      for (unsigned i = 0; i < parts; ++i)
        acc.parts.push_back(newFor.getRegionIterArg(next++));
      tiles[arg] = std::move(acc);
    }
    for (Operation &inner : op.getBody()->without_terminator())
      if (failed(result = lower(b, &inner)))
        break;
    if (succeeded(result)) {
      SmallVector<Value> yields;
      for (Value v : op.getBody()->getTerminator()->getOperands()) {
        if (!isa<tile::TileType>(v.getType())) {
          yields.push_back(mapping.lookup(v));
          continue;
        }
        Accumulator *acc = handle<Accumulator>(v);
        if (!acc)
          return op.emitOpError() << "yields a tile that is not an accumulator";
        llvm::append_range(yields, acc->parts);
      }
      scf::YieldOp::create(b, yields);
    }
  }
  unsigned next = 0;
  for (auto [res, parts] : llvm::zip(op.getResults(), partsPerArg)) {
    if (parts == 0) {
      mapping.map(res, newFor.getResult(next++));
      continue;
    }
    Accumulator acc;
    for (unsigned i = 0; i < parts; ++i)
      acc.parts.push_back(newFor.getResult(next++));
    tiles[res] = std::move(acc);
  }
  return result;
}

LogicalResult KernelEmitter::lower(ImplicitLocOpBuilder &b, Operation *op) {
  b.setLoc(op->getLoc());
  if (auto id = dyn_cast<tile::TileIdOp>(op)) {
    mapping.map(id.getResult(), lowerTileId(b, id));
    return success();
  }
  if (auto load = dyn_cast<tile::LoadOp>(op)) {
    tiles[load.getResult()] = PendingLoad{load};
    return success();
  }
  if (auto w = dyn_cast<tile::LoadWeightOp>(op)) {
    tiles[w.getResult()] = PendingWeight{w};
    return success();
  }
  if (auto s = dyn_cast<tile::LoadScalesOp>(op)) {
    tiles[s.getResult()] = PendingScales{s};
    return success();
  }
  if (auto z = dyn_cast<tile::ZeroOp>(op)) {
    tile::TileType t = z.getResult().getType();
    if (t.getRows() != cfg.bm || t.getCols() != cfg.bn)
      return z.emitOpError() << "accumulator must match the MMA tile " << cfg.bm << "x" << cfg.bn;
    auto vt = VectorType::get({cfg.accPerLane()}, b.getF32Type());
    Value zero = arith::ConstantOp::create(b, vt, DenseElementsAttr::get(vt, 0.0f));
    tiles[z.getResult()] =
        Accumulator{SmallVector<Value>(cfg.rowTiles() * cfg.colTiles(), zero)};
    return success();
  }
  if (auto q = dyn_cast<tile::QuantizeOp>(op))
    return lowerQuantize(b, q);
  if (auto mx = dyn_cast<tile::LoadMxOp>(op))
    return lowerLoadMx(b, mx);
  if (auto group = dyn_cast<tile::GroupBlockOp>(op))
    return lowerGroupBlock(b, group);
  if (auto mma = dyn_cast<tile::ScaledMmaOp>(op))
    return lowerScaledMma(b, mma);
  if (auto act = dyn_cast<tile::ActivationOp>(op))
    return lowerActivation(b, act);
  if (auto st = dyn_cast<tile::StoreOp>(op))
    return lowerStore(b, st);
  if (auto st = dyn_cast<tile::StoreActMxOp>(op))
    return lowerStoreActMx(b, st);
  if (auto st = dyn_cast<tile::StoreScatterAddOp>(op))
    return lowerStoreScatterAdd(b, st);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(b, forOp);
  if (isa<func::ReturnOp>(op)) {
    if (groupGuard)
      b.setInsertionPointAfter(groupGuard);
    gpu::ReturnOp::create(b);
    return success();
  }
  if (isScalarArith(op)) {
    b.clone(*op, mapping);
    return success();
  }
  return op->emitOpError() << "is not supported inside an mxtile kernel lowered to " << cfg.chip;
}

LogicalResult KernelEmitter::lowerGroupBlock(ImplicitLocOpBuilder &b, tile::GroupBlockOp op) {
  if (groupGuard || !isa<func::FuncOp>(op->getParentOp()))
    return op.emitOpError() << "must appear once, at the top level of the kernel";
  // Uniform loads (the block id is the workgroup's).
  groupGuard = emitGroupBlockGuard(b, op, mapping, cfg.bm);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

FailureOr<Config> deriveConfig(func::FuncOp kernel, StringRef chip) {
  Config cfg;
  cfg.chip = chip.str();
  std::optional<Arch> arch = parseArch(chip);
  cfg.hw = arch ? amd::amdChip(*arch) : nullptr;
  if (!cfg.hw)
    return kernel.emitError() << "mxtile-to-amdgpu: unsupported chip '" << chip
                              << "'; expected gfx950 or gfx1250";
  cfg.target = &targetInfo(*arch);
  cfg.wave = int(cfg.target->waveSize);
  cfg.waves = int(cfg.target->wavesPerWorkgroup);
  tile::ScaledMmaOp mma;
  kernel.walk([&](tile::ScaledMmaOp op) { mma = op; });
  if (!mma)
    return kernel.emitError() << "kernel '" << kernel.getSymName()
                              << "' has no mxtile.scaled_mma to fix its tile shape";
  cfg.bm = mma.getA().getType().getRows();
  cfg.bk = mma.getA().getType().getCols();
  cfg.bn = mma.getB().getType().getRows();
  if (cfg.bn != cfg.waves * 64)
    return mma.emitOpError() << "on " << chip << " the N tile must be " << cfg.waves * 64
                             << " (" << cfg.waves << " waves x 64 columns), got " << cfg.bn;
  if (cfg.bm % 16 != 0 || cfg.bm > 128)
    return mma.emitOpError() << "on " << chip << " the M tile must be a multiple of 16 up to 128, got "
                             << cfg.bm;
  if (cfg.bk != 128 && cfg.bk != 256)
    return mma.emitOpError() << "on " << chip << " the K tile must be 128 or 256, got " << cfg.bk;
  bool quantizes = false;
  kernel.walk([&](tile::QuantizeOp) { quantizes = true; });
  if (quantizes && (cfg.elemsPerThread() % 8 != 0 ||
                    cfg.quantPasses() * cfg.threads() * cfg.elemsPerThread() != cfg.bm * cfg.bk))
    return mma.emitOpError() << "tile " << cfg.bm << "x" << cfg.bk
                             << " cannot be split evenly over the quantizing threads";
  kernel.walk([&](tile::StoreActMxOp) { cfg.actMx = true; });
  const int64_t lds = 2 * (cfg.aDataBytes() + cfg.aScaleBytes()) + cfg.actMxBytes();
  if (lds > cfg.target->sharedBytes)
    return mma.emitOpError() << "needs " << lds << " bytes of LDS on " << chip << " (the A stages"
                             << (cfg.actMx ? " and the fused epilogue's staged activations" : "")
                             << "), over its " << cfg.target->sharedBytes;
  return cfg;
}

struct TileToAMDGPUPass : tile::impl::TileToAMDGPUBase<TileToAMDGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The chip is checked even when there is nothing to lower: a pipeline
    // for a chip we do not know must not look like it worked.
    if (std::optional<Arch> arch = parseArch(chip); !arch || !targetInfo(*arch).isAmd()) {
      module.emitError() << "mxtile-to-amdgpu: unsupported chip '" << chip
                         << "'; expected gfx950 or gfx1250";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels = collectKernels(module);
    if (kernels.empty())
      return;
    auto gpuModule = createKernelModule(
        module, ROCDL::ROCDLTargetAttr::get(&getContext(), /*optLevel=*/3, "amdgcn-amd-amdhsa", chip));
    for (func::FuncOp kernel : kernels)
      if (failed(isSimtKernel(kernel) ? outlineSimtKernel(kernel, gpuModule)
                                      : lowerKernel(kernel, gpuModule)))
        return signalPassFailure();
    selectApproximateExp2(gpuModule, [](OpBuilder &b, Location loc, Value x) -> Value {
      return ROCDL::ROCDLExp2::create(b, loc, x.getType(), x);
    });
  }

  LogicalResult lowerKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule) {
    FailureOr<Config> cfg = deriveConfig(kernel, chip);
    if (failed(cfg))
      return failure();
    MLIRContext *ctx = &getContext();
    auto global = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Global);
    auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    SmallVector<Type> argTypes;
    for (Type t : kernel.getArgumentTypes()) {
      if (auto m = dyn_cast<MemRefType>(t)) {
        if (m.getRank() != 1)
          return kernel.emitError() << "kernel buffers must be 1-D memrefs, got " << t;
        argTypes.push_back(MemRefType::get({kNominalElements}, m.getElementType(),
                                           MemRefLayoutAttrInterface(), global));
      } else if (t.isSignlessInteger(32) || t.isIndex() || t.isF32()) {
        argTypes.push_back(t);
      } else {
        return kernel.emitError() << "unsupported kernel argument type " << t;
      }
    }
    auto i8 = IntegerType::get(ctx, 8);
    SmallVector<Type> lds = {
        MemRefType::get({2 * cfg->aDataBytes()}, i8, MemRefLayoutAttrInterface(), workgroup),
        MemRefType::get({2 * cfg->aScaleBytes()}, i8, MemRefLayoutAttrInterface(), workgroup)};
    if (cfg->actMx)
      lds.push_back(MemRefType::get({cfg->actMxBytes() / 4}, Float32Type::get(ctx),
                                    MemRefLayoutAttrInterface(), workgroup));
    auto func = createKernelFunc(gpuModule, kernel, argTypes, lds, cfg->threads());

    ArrayRef<BlockArgument> buffers = func.getWorkgroupAttributions();
    KernelEmitter emitter(*cfg, func, buffers[0], buffers[1],
                          cfg->actMx ? Value(buffers[2]) : Value());
    Block &entry = func.getBody().front();
    ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
    b.setInsertionPointToStart(&entry);
    for (auto [from, to] : llvm::zip(kernel.getArguments(), func.getArguments()))
      emitter.mapping.map(from, to);
    emitter.emitPrologue(b);
    for (Operation &op : kernel.getBody().front())
      if (failed(emitter.lower(b, &op))) {
        func.erase();
        return failure();
      }
    kernel.erase();
    return success();
  }
};

} // namespace
