//===- TileToNVVM.cpp - Lower mxtile kernels to nvvm (sm_90a) -------------===//
//
// Outlines each mxtile kernel into a gpu.func in an sm_90a gpu.module. Each
// global buffer gets the element type its accesses want, so 16-byte loads are
// single memref.load ops: activations vector<8xbf16>, weights vector<4xi32>,
// scales i32, the quantization dump i32 (codes) / i8 (scales), the output
// bf16. Shapes are nominal (the bare-pointer convention needs static ones).
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/ActivationEmitter.h"
#include "mxfp4/Conversion/GroupBlockGuard.h"
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/KernelOutlining.h"
#include "mxfp4/Conversion/SimtOutlining.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"
#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/Sm90Geometry.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mxfp4::tile {
#define GEN_PASS_DEF_TILETONVVM
#include "mxfp4/Dialect/Tile/TilePasses.h.inc"
} // namespace mxfp4::tile

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

static constexpr int64_t kNominalElements = int64_t(1) << 27;

void Sm90Emitter::emitIds(ImplicitLocOpBuilder &b) {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = idxRem(b, tid, 32);
  warp = idxDiv(b, tid, 32);
  g = idxDiv(b, lane, 4);
  t = idxRem(b, lane, 4);
}

Value Sm90Emitter::valueAt(ImplicitLocOpBuilder &b, Value v, scf::ForOp loop, Value iv) {
  if (v == loop.getInductionVar())
    return iv;
  Operation *def = v.getDefiningOp();
  if (!def || !loop->isAncestor(def))
    return mapping.lookup(v);
  IRMapping local;
  for (Value operand : def->getOperands())
    local.map(operand, valueAt(b, operand, loop, iv));
  Operation *clone = b.clone(*def, local);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

Value Sm90Emitter::valueAtStep(ImplicitLocOpBuilder &b, Value v, scf::ForOp loop, Value st) {
  Value iv = arith::AddIOp::create(b, mapping.lookup(loop.getLowerBound()),
                                   arith::MulIOp::create(b, st, mapping.lookup(loop.getStep())));
  return valueAt(b, v, loop, iv);
}

LogicalResult Sm90Emitter::lower(ImplicitLocOpBuilder &b, Operation *op) {
  b.setLoc(op->getLoc());
  if (auto id = dyn_cast<tile::TileIdOp>(op)) {
    mapping.map(id.getResult(), cfg.streamsImage() ? streamedCoordinate(b, id, currentTile)
                                : cfg.tileLoop()   ? tileCoordinate(b, id, currentTile)
                                                   : lowerTileId(b, id));
    return success();
  }
  if (auto z = dyn_cast<tile::ZeroOp>(op)) {
    tile::TileType tt = z.getResult().getType();
    if (tt.getRows() != cfg.bm || tt.getCols() != cfg.bn)
      return z.emitOpError() << "accumulator must match the MMA tile " << cfg.bm << "x" << cfg.bn;
    auto vt = VectorType::get({4}, b.getF32Type());
    Value zero = arith::ConstantOp::create(b, vt, DenseElementsAttr::get(vt, 0.0f));
    accumulators[z.getResult()] = SmallVector<Value>(cfg.tilesPerWarp() * cfg.tokenTiles(), zero);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return lowerKLoop(b, loop);
  if (auto act = dyn_cast<tile::ActivationOp>(op)) {
    auto gate = accumulators.find(act.getInput());
    auto up = act.getUp() ? accumulators.find(act.getUp()) : accumulators.end();
    if (gate == accumulators.end() || (act.getUp() && up == accumulators.end()))
      return act.emitOpError() << "operands must be accumulator tiles";
    SmallVector<Value> out;
    for (size_t i = 0; i < gate->second.size(); ++i)
      out.push_back(emitActivation(b, act, gate->second[i],
                                   up != accumulators.end() ? up->second[i] : Value()));
    accumulators[act.getResult()] = std::move(out);
    return success();
  }
  if (auto st = dyn_cast<tile::StoreOp>(op))
    return lowerStore(b, st);
  if (auto st = dyn_cast<tile::StoreActMxOp>(op))
    return lowerStoreActMx(b, st);
  if (auto st = dyn_cast<tile::StoreScatterAddOp>(op))
    return lowerStoreScatterAdd(b, st);
  if (auto group = dyn_cast<tile::GroupBlockOp>(op)) {
    // Uniform loads, before any barrier or copy is issued.
    groupGuard = emitGroupBlockGuard(b, group, mapping, cfg.bm);
    return success();
  }
  if (isa<func::ReturnOp>(op)) {
    if (groupGuard)
      b.setInsertionPointAfter(groupGuard);
    else if (firstGroupOnly)
      b.setInsertionPointAfter(firstGroupOnly);
    gpu::ReturnOp::create(b);
    return success();
  }
  // The quantizer kernel: a load consumed by a quantize at the top level.
  if (auto load = dyn_cast<tile::LoadOp>(op);
      load && load->hasOneUse() && isa<tile::QuantizeOp>(*load->user_begin()) &&
      load->getParentOp() == (*load->user_begin())->getParentOp())
    return success(); // emitted with its quantize
  if (auto quant = dyn_cast<tile::QuantizeOp>(op)) {
    auto load = quant.getInput().getDefiningOp<tile::LoadOp>();
    if (!load || !(quant.getDumpData() || quant.getQdq()))
      return quant.emitOpError() << "outside a K loop the sm_90a lowering quantizes an "
                                    "mxtile.load into its dump or qdq buffers only";
    Value col = mapping.lookup(load.getCol());
    // qdq_mxfp4 of BM 64 stages the block from word 0 (storeImageFromSmem).
    quantizeToSmem(b, quant, loadActivations(b, load, col), col,
                   cfg.stagesImage ? idxConst(b, 0) : Value());
    if (cfg.stagesImage)
      storeImageFromSmem(b, quant, col);
    return success();
  }
  if (isScalarArith(op)) {
    b.clone(*op, mapping);
    return success();
  }
  return op->emitOpError() << "is not supported outside the K loop by the sm_90a lowering";
}

namespace {

/// The memref element type each kernel argument is accessed with (a
/// pointer type: the argument is passed as that pointer, not a memref).
FailureOr<Type> argElementType(func::FuncOp kernel, BlockArgument arg) {
  Type want;
  MLIRContext *ctx = kernel.getContext();
  auto agree = [&](Type t) -> LogicalResult {
    if (want && want != t)
      return kernel.emitError() << "argument " << arg.getArgNumber()
                                << " is used in incompatible roles";
    want = t;
    return success();
  };
  for (Operation *user : arg.getUsers()) {
    LogicalResult r = success();
    if (auto l = dyn_cast<tile::LoadOp>(user); l && l.getBase() == arg)
      r = agree(VectorType::get({8}, BFloat16Type::get(ctx)));
    else if (isa<tile::LoadQdqOp>(user)) // the image, copied in bulk from its address
      r = agree(LLVM::LLVMPointerType::get(ctx));
    else if (auto mx = dyn_cast<tile::LoadMxOp>(user))
      r = agree(mx.getData() == arg ? Type(VectorType::get({4}, IntegerType::get(ctx, 32)))
                                    : Type(IntegerType::get(ctx, 8)));
    else if (auto w = dyn_cast<tile::LoadWeightOp>(user))
      r = agree(w.getDescriptors() == arg ? Type(LLVM::LLVMPointerType::get(ctx))
                                          : Type(VectorType::get({4}, IntegerType::get(ctx, 32))));
    else if (isa<tile::LoadScalesOp, tile::GroupBlockOp>(user))
      r = agree(IntegerType::get(ctx, 32));
    else if (auto q = dyn_cast<tile::QuantizeOp>(user)) // the image: written by bulk copies
      r = agree(q.getQdq() == arg        ? Type(LLVM::LLVMPointerType::get(ctx))
                : q.getDumpData() == arg ? Type(IntegerType::get(ctx, 32))
                                         : Type(IntegerType::get(ctx, 8)));
    else if (auto s = dyn_cast<tile::StoreOp>(user))
      r = agree(s.getBase() == arg || s.getWorkspace() == arg
                    ? Type(LLVM::LLVMPointerType::get(ctx))
                    : Type(IntegerType::get(ctx, 32)));
    else if (auto s = dyn_cast<tile::StoreActMxOp>(user)) // codes: 16-byte stores
      r = agree(s.getCodes() == arg || s.getWorkspace() == arg
                    ? Type(LLVM::LLVMPointerType::get(ctx))
                    : cast<MemRefType>(arg.getType()).getElementType());
    else if (auto s = dyn_cast<tile::StoreScatterAddOp>(user)) // out: 16-byte reductions
      r = agree(s.getOut() == arg ? Type(LLVM::LLVMPointerType::get(ctx))
                                  : cast<MemRefType>(arg.getType()).getElementType());
    else
      return user->emitOpError()
             << "uses a kernel buffer in a way the sm_90a lowering does not know";
    if (failed(r))
      return failure();
  }
  if (!want)
    want = cast<MemRefType>(arg.getType()).getElementType();
  return want;
}

/// The kernel's schedule attribute (`mxtile.schedule`).
tile::ScheduleAttr scheduleOf(func::FuncOp kernel) {
  return kernel->getAttrOfType<tile::ScheduleAttr>(tile::TileDialect::getScheduleAttrName());
}

/// The spec an sm_90a kernel stands for: its problem read back from its
/// ops, its schedule from its attribute. Where the two disagree (a tile
/// shape that is not the schedule's) it is an error here; whether the spec
/// is legal is verifyKernelSpec's to say (deriveConfig).
FailureOr<KernelSpec> readKernelSpec(func::FuncOp kernel) {
  tile::ScheduleAttr schedule = scheduleOf(kernel);
  if (!schedule)
    return kernel.emitError() << "kernel '" << kernel.getSymName() << "' has no schedule ('"
                              << tile::TileDialect::getScheduleAttrName()
                              << "' = #mxtile.schedule<...>)";
  KernelSpec spec;
  spec.schedule() = schedule.getSchedule();
  spec.arch = Arch::SM90A;
  tile::ScaledMmaOp mma;
  tile::LoadWeightOp weight;
  tile::LoadScalesOp scales;
  tile::QuantizeOp quant;
  tile::StoreOp store;
  tile::ActivationOp act;
  tile::StoreActMxOp actMx;
  tile::StoreScatterAddOp scatter;
  // The activations' ld: K (the weights' K is padded to whole tiles).
  std::optional<int64_t> activationLd;
  bool image = false, mx = false, grouped = false;
  // The MoE scale layout read or written, when not row-major (which
  // verifyKernelSpec then refuses on sm_90a).
  int64_t scaleRep = 1;
  kernel.walk([&](Operation *op) {
    if (auto x = dyn_cast<tile::LoadMxOp>(op); x && x.getScaleRep() != 1)
      scaleRep = x.getScaleRep();
    if (auto x = dyn_cast<tile::StoreActMxOp>(op); x && x.getScaleRep() != 1)
      scaleRep = x.getScaleRep();
    if (auto x = dyn_cast<tile::ScaledMmaOp>(op))
      mma = x;
    else if (auto x = dyn_cast<tile::LoadWeightOp>(op))
      weight = x;
    else if (auto x = dyn_cast<tile::LoadScalesOp>(op))
      scales = x;
    else if (auto x = dyn_cast<tile::QuantizeOp>(op))
      quant = x;
    else if (auto x = dyn_cast<tile::StoreOp>(op))
      store = x;
    else if (auto x = dyn_cast<tile::ActivationOp>(op))
      act = x;
    else if (auto x = dyn_cast<tile::StoreActMxOp>(op))
      actMx = x;
    else if (auto x = dyn_cast<tile::StoreScatterAddOp>(op))
      scatter = x;
    if (auto x = dyn_cast<tile::LoadOp>(op))
      activationLd = getConstantIntValue(x.getLd());
    else if (auto x = dyn_cast<tile::LoadMxOp>(op))
      activationLd = getConstantIntValue(x.getLd());
    else if (auto x = dyn_cast<tile::LoadQdqOp>(op))
      activationLd = getConstantIntValue(x.getLd());
    image |= isa<tile::LoadQdqOp>(op);
    mx |= isa<tile::LoadMxOp>(op);
    grouped |= isa<tile::GroupBlockOp>(op);
  });
  if (quant)
    spec.rounding = tile::fromTile(quant.getRounding());
  if (!mma && !weight && quant) {
    // The quantizers: rows of a constant K, no weights.
    spec.op = quant.getQdq() ? OpKind::QdqMx : OpKind::QuantizeMx;
    auto load = quant.getInput().getDefiningOp<tile::LoadOp>();
    std::optional<int64_t> ld = load ? getConstantIntValue(load.getLd()) : std::nullopt;
    if (!ld)
      return quant.emitOpError() << "on sm_90a the quantizer reads rows of a constant K (an "
                                    "mxtile.load with a constant ld)";
    tile::TileType in = quant.getInput().getType();
    if (in.getRows() != spec.bm || in.getCols() != spec.bk)
      return quant.emitOpError() << "quantizes " << in.getRows() << "x" << in.getCols()
                                 << " blocks; the schedule says BM " << spec.bm << " x BK "
                                 << spec.bk;
    spec.n = 0;
    spec.k = *ld;
    spec.weightLayout = WeightLayout::RowMajor;
    spec.scaleLayout = ScaleLayout::RowMajor;
    return spec;
  }
  if (!mma || !weight || !scales)
    return kernel.emitError() << "kernel '" << kernel.getSymName()
                              << "' has no mxtile.scaled_mma fed by mxtile.load_weight and "
                                 "mxtile.load_scales (and is not a quantizer)";
  if (grouped && !mx)
    return kernel.emitError() << "on sm_90a a grouped GEMM (mxtile.group_block) reads MXFP4 "
                                 "activations (mxtile.load_mx)";
  spec.op = image     ? OpKind::GemmQdqA4W4
            : grouped ? OpKind::MoeGemm
            : mx      ? OpKind::GemmMxA4W4
                      : OpKind::GemmA4W4;
  // The fused activation epilogue stores N / 2 intermediate columns.
  std::optional<int64_t> n = store     ? getConstantIntValue(store.getLd())
                             : actMx   ? getConstantIntValue(actMx.getLd())
                             : scatter ? getConstantIntValue(scatter.getLd())
                                       : std::nullopt;
  if (!n || int(bool(store)) + int(bool(actMx)) + int(bool(scatter)) != 1)
    return kernel.emitError() << "on sm_90a a GEMM stores one mxtile.store (or "
                                 "mxtile.store_act_mx or mxtile.store_scatter_add) into a "
                                 "matrix of a constant N (its ld)";
  spec.n = actMx ? 2 * *n : *n;
  spec.moeScaleRep = scaleRep;
  if (scatter)
    spec.epilogue = Epilogue::Scatter;
  if (actMx) {
    spec.epilogue = actMx.getDebug() ? Epilogue::ActMxDebug : Epilogue::ActMx;
    spec.activation = tile::fromTile(actMx.getKind());
    spec.rounding = tile::fromTile(actMx.getRounding());
  }
  spec.k = activationLd.value_or(weight.getK());
  if (int64_t(weight.getK()) != gemmWeightK(spec.arch, spec.k))
    return weight.emitOpError() << "reads weights of K = " << weight.getK()
                                << "; activations of K = " << spec.k << " take "
                                << gemmWeightK(spec.arch, spec.k) << " (K padded to whole tiles)";
  const int64_t rows = mma.getA().getType().getRows(), depth = mma.getA().getType().getCols(),
                cols = mma.getB().getType().getRows();
  if (rows != spec.bm || cols != spec.bn || depth != spec.bk)
    return mma.emitOpError() << "multiplies " << rows << "x" << depth << " by " << cols << "x"
                             << depth << " tiles; the schedule says BM " << spec.bm << ", BN "
                             << spec.bn << ", BK " << spec.bk;
  spec.weightLayout = tile::fromTile(weight.getLayout());
  spec.scaleLayout = tile::fromTile(scales.getLayout());
  if (quant && quant.getDumpData())
    spec.epilogue = Epilogue::BF16DumpQuant;
  if (act)
    spec.activation = tile::fromTile(act.getKind());
  return spec;
}

FailureOr<Config> deriveConfig(func::FuncOp kernel) {
  FailureOr<KernelSpec> read = readKernelSpec(kernel);
  if (failed(read))
    return failure();
  const KernelSpec &spec = *read;
  if (Error e = verifyKernelSpec(spec))
    return kernel.emitError() << e.message();
  Config cfg;
  cfg.bm = spec.bm;
  cfg.bn = spec.bn;
  cfg.bk = spec.bk;
  if (isQuantizer(spec.op)) {
    // The quantizer: one BM x BK block, no MMA, no shared memory to speak
    // of. qdq_mxfp4's BM 64 blocks (large M: throughput) leave through
    // shared memory and bulk copies; smaller ones (latency) store directly.
    cfg.quantizeOnly = true;
    cfg.stagesImage = spec.op == OpKind::QdqMx && cfg.bm == 64;
    // The streamed image (Sm90ImageStream.cpp): pieces of BM x 128 stored
    // directly, in the K order of the GEMM's splits.
    if (spec.imageStream) {
      cfg.imageStream = spec.imageStream;
      cfg.imageSteps = spec.k / 128;
    }
    return cfg;
  }
  cfg.foldedScales = spec.foldedScales;
  if (spec.warpSplitK) {
    // The warp-split variant: its own K loop and shared memory, nothing
    // below applies but the weight layout.
    cfg.warpSplitK = spec.warpSplitK;
    // The workgroup's registers fit one SM: its warps spread over the four
    // schedulers' 16384 registers each, in whole multiples of 8. 14 warps
    // at 65536 / 448 = 144 failed to launch (CUDA_ERROR_LAUNCH_OUT_OF_
    // RESOURCES): four of them share one scheduler's file. At most 128, so
    // that two workgroups of 8 warps share an SM (the loop with a pass for
    // one token takes 158 uncapped, 128 without spills).
    const int64_t warpsPerScheduler = (cfg.warpSplitK + 3) / 4;
    cfg.maxRegisters = std::min<int64_t>(16384 / (32 * warpsPerScheduler), 128) / 8 * 8;
    return cfg;
  }
  // The MXFP4-activation kernel with 128 tokens fits 128 registers without
  // spills or serialized wgmmas (ptxas report, test/Target): two workgroups
  // (16 warps) per SM instead of one. BM 64 under the same cap has its
  // wgmmas serialized (ptxas C7511), so it keeps its registers.
  if ((spec.op == OpKind::GemmMxA4W4 || spec.op == OpKind::MoeGemm) && cfg.bm == 128)
    cfg.maxRegisters = 128;
  // On the activation image, BM 128's five stages leave room for one
  // workgroup per SM: its 256 threads may take every register. With fewer
  // stages two fit, if each takes at most 128 registers a thread.
  cfg.stagedActivations = spec.op == OpKind::GemmQdqA4W4;
  cfg.stages = spec.stages;
  cfg.twoWarpgroups = spec.twoWarpgroups;
  if (spec.decode) {
    cfg.decodeSteps = sm90StepsPerWorkgroup(spec);
    // BM 8 / 16 x BK 128: four 128-thread workgroups per SM (decode's
    // split-K grids fill one wave with four) at the cost of a spilled word;
    // larger tiles hold too many registers in flight for that cap. BM 8 x
    // BN 64 with four K steps of weights in flight (Sm90DecodeKLoop.cpp)
    // fits 80 with no spill (six workgroups a SM); at 72 the fourth step
    // spilled and ptxas serialized the wgmmas (C7512), and two steps ahead
    // at 72 (seven a SM) measured slower. BM 16 x BN 64 (the rule's tile up
    // to M = 32) fits 96 with no spill (124 uncapped): five a SM, which
    // multi-wave grids gain from and the rule's one-wave grids run the same
    // (mxfp4-bench --preset=model-dense; docs/Performance.md).
    if (cfg.bm <= 16 && cfg.bk == 128) {
      const bool narrow = cfg.bn == sm90::kNarrowTileRows;
      cfg.maxRegisters = narrow ? (cfg.bm <= 8 ? 80 : 96) : 128;
    }
    if (spec.decodeGroups > 1) {
      cfg.decodeGroups = spec.decodeGroups;
      // The workgroup's registers fit one SM (65536; ptxas takes at most 255
      // a thread), in whole multiples of 8.
      const int64_t fit = std::min<int64_t>(65536 / cfg.blockThreads(), 255) / 8 * 8;
      cfg.maxRegisters = cfg.maxRegisters ? std::min(cfg.maxRegisters, fit) : fit;
    }
  }
  if (spec.persistent || spec.streamK)
    cfg.persistentTilesX = gemmWeightRows(spec.arch, spec.n) / spec.bn;
  cfg.streamK = spec.streamK;
  // BN 192's 384 threads fit the register file only under 170 registers.
  if (cfg.bn == sm90::kWideTileRows)
    cfg.maxRegisters = 168;
  if (cfg.stagedActivations && cfg.bm == 128 && sm90::workgroupsPerSm(cfg.shared()) >= 2)
    cfg.maxRegisters = 128;
  if (spec.imageStream) {
    // The streamed image (Sm90ImageStream.cpp): each chunk of a block is
    // read once by one workgroup of every N column.
    cfg.imageStream = spec.imageStream;
    cfg.imageSteps = spec.k / 128;
    cfg.imageReaders = gemmWeightRows(spec.arch, spec.n) / spec.bn;
  }
  return cfg;
}

struct TileToNVVMPass : tile::impl::TileToNVVMBase<TileToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels = collectKernels(module);
    if (kernels.empty())
      return;
    // PTX 8.6: the first with the shared::cta form of the TMA copies (no
    // clusters here); CUDA 12.8+ drivers and ptxas.
    auto gpuModule = createKernelModule(
        module, NVVM::NVVMTargetAttr::get(&getContext(), /*optLevel=*/3, "nvptx64-nvidia-cuda",
                                          "sm_90a", "+ptx86"));
    for (func::FuncOp kernel : kernels)
      if (failed(isSimtKernel(kernel) ? outlineSimtKernel(kernel, gpuModule)
                                      : lowerKernel(kernel, gpuModule)))
        return signalPassFailure();
    selectApproximateExp2(gpuModule, [](OpBuilder &b, Location loc, Value x) -> Value {
      return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                           b.getStringAttr("llvm.nvvm.ex2.approx.f32"), x)
          .getResult(0);
    });
  }

  LogicalResult lowerKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule) {
    FailureOr<Config> cfg = deriveConfig(kernel);
    if (failed(cfg))
      return failure();
    MLIRContext *ctx = &getContext();
    SmallVector<Type> argTypes;
    // The streamed image's flags follow M (the one i32 argument): a plain
    // pointer, like the image (Sm90ImageStream.cpp).
    int64_t flagsArg = -1;
    if (cfg->imageStream)
      for (BlockArgument arg : kernel.getArguments())
        if (arg.getType().isSignlessInteger(32))
          flagsArg = arg.getArgNumber() + 1;
    if (cfg->imageStream && (flagsArg < 1 || flagsArg >= int64_t(kernel.getNumArguments()) ||
                             !isa<MemRefType>(kernel.getArgument(flagsArg).getType())))
      return kernel.emitError() << "the streamed image's flags must be the buffer after M";
    for (BlockArgument arg : kernel.getArguments()) {
      Type t = arg.getType();
      if (int64_t(arg.getArgNumber()) == flagsArg) {
        argTypes.push_back(LLVM::LLVMPointerType::get(ctx));
      } else if (isa<MemRefType>(t)) {
        FailureOr<Type> elem = argElementType(kernel, arg);
        if (failed(elem))
          return failure();
        // TMA descriptors, the activation image and the output are
        // addressed by bulk copies and 16-byte stores: plain pointers (a
        // memref would reach them through a 32-bit index).
        if (isa<LLVM::LLVMPointerType>(*elem))
          argTypes.push_back(*elem);
        else
          argTypes.push_back(MemRefType::get({kNominalElements}, *elem));
      } else if (t.isSignlessInteger(32) || t.isIndex() || t.isF32()) {
        argTypes.push_back(t);
      } else {
        return kernel.emitError() << "unsupported kernel argument type " << t;
      }
    }
    auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto i32 = IntegerType::get(ctx, 32);
    const int64_t staticWords = cfg->stagesImage ? cfg->bm * cfg->bk / 2 : 4;
    auto smemType = MemRefType::get({staticWords}, i32, MemRefLayoutAttrInterface(), workgroup);
    // The quantizers: static workgroup memory (qdq_mxfp4's staged block,
    // at most 32 KiB). GEMMs: dynamic shared memory
    // (Kernels/Sm90Pipeline.h; the launch passes its size, the runtime
    // raises the function's limit; lib/Target makes the symbol external
    // and 1024-byte aligned, toolchain.md 2.2).
    const bool dynamic = !cfg->quantizeOnly;
    OpBuilder ob(ctx);
    auto func = createKernelFunc(gpuModule, kernel, argTypes,
                                 dynamic ? TypeRange{} : TypeRange{smemType},
                                 int32_t(cfg->blockThreads()));
    // wgmma matrix descriptors address 16-byte aligned core matrices; 128 B
    // keeps every slab on its own bank-aligned boundary.
    if (!dynamic)
      func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                       ob.getI64IntegerAttr(128));
    if (cfg->maxRegisters)
      func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    ob.getI32IntegerAttr(int32_t(cfg->maxRegisters)));
    // A tile's splits form one cluster (Sm90Store.cpp): .reqnctapercluster,
    // so a plain launch of the grid (z = splits) makes the clusters.
    int64_t splits = 1;
    kernel.walk([&](tile::StoreOp st) {
      if (st.getWorkspace())
        splits = st.getSplits();
    });
    kernel.walk([&](tile::StoreActMxOp st) {
      if (st.getWorkspace())
        splits = st.getSplits();
    });
    if (sm90::clusterSplitK(cfg->bm, splits, cfg->bn))
      func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    ob.getDenseI32ArrayAttr({1, 1, int32_t(splits)}));

    ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
    b.setInsertionPointToStart(&func.getBody().front());
    Value smem, stageVectors, stageWords, smemBase;
    if (dynamic) {
      Value bytes = gpu::DynamicSharedMemoryOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
                             workgroup));
      auto view = [&](Type elem, int64_t elemBytes, int64_t offset, int64_t size) {
        return memref::ViewOp::create(
            b, MemRefType::get({size / elemBytes}, elem, MemRefLayoutAttrInterface(), workgroup),
            bytes, arith::ConstantIndexOp::create(b, offset), ValueRange{});
      };
      const sm90::SharedLayout l = cfg->shared();
      smem = view(i32, 4, 0, l.activationBytes);
      const int64_t stageSize = l.stages * l.stageBytes();
      stageVectors = view(VectorType::get({4}, i32), 16, l.stagesOffset(), stageSize);
      stageWords = view(i32, 4, l.stagesOffset(), stageSize);
      smemBase = arith::IndexCastUIOp::create(
          b, b.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(b, bytes));
    } else {
      smem = func.getWorkgroupAttributions()[0];
    }
    Sm90Emitter emitter(*cfg, smem, stageVectors, stageWords, smemBase);
    for (auto [from, to] : llvm::zip(kernel.getArguments(), func.getArguments()))
      emitter.mapping.map(from, to);
    emitter.emitIds(b);
    // A GEMM launched as this kernel's programmatic dependent may start
    // once every workgroup of this one runs, and do its prologue on the SMs
    // this one leaves; its griddepcontrol.wait waits for this one to end.
    // The GEMMs on the activation image let the next one in too (the
    // second part of a split M, Ops/GemmA4W4.cpp).
    if (cfg->quantizeOnly || cfg->stagedActivations)
      NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
    if (cfg->imageStream) {
      emitter.rowsArg =
          arith::IndexCastUIOp::create(b, b.getIndexType(), func.getArgument(flagsArg - 1));
      emitter.imageFlags = LLVM::AddrSpaceCastOp::create(b, LLVM::LLVMPointerType::get(ctx, 1),
                                                         func.getArgument(flagsArg));
    }
    if (cfg->streamsImage()) {
      if (failed(emitter.lowerStreamedQuantizer(b, kernel))) {
        func.erase();
        return failure();
      }
    } else if (cfg->tileLoop()) {
      if (failed(cfg->streamK ? emitter.lowerStreamK(b, kernel)
                              : emitter.lowerPersistent(b, kernel))) {
        func.erase();
        return failure();
      }
    } else {
      for (Operation &op : kernel.getBody().front())
        if (failed(emitter.lower(b, &op))) {
          func.erase();
          return failure();
        }
    }
    kernel.erase();
    return success();
  }
};

} // namespace
