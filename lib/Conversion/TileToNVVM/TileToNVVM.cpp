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
#include "mxfp4/Conversion/IndexMath.h"
#include "mxfp4/Conversion/KernelOutlining.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"

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
  if (isa<func::ReturnOp>(op)) {
    if (firstGroupOnly)
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
    else if (isa<tile::LoadScalesOp>(user))
      r = agree(IntegerType::get(ctx, 32));
    else if (auto q = dyn_cast<tile::QuantizeOp>(user)) // the image: written by bulk copies
      r = agree(q.getQdq() == arg        ? Type(LLVM::LLVMPointerType::get(ctx))
                : q.getDumpData() == arg ? Type(IntegerType::get(ctx, 32))
                                         : Type(IntegerType::get(ctx, 8)));
    else if (auto s = dyn_cast<tile::StoreOp>(user))
      r = agree(s.getBase() == arg || s.getWorkspace() == arg
                    ? Type(LLVM::LLVMPointerType::get(ctx))
                    : Type(IntegerType::get(ctx, 32)));
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

FailureOr<Config> deriveConfig(func::FuncOp kernel) {
  tile::ScaledMmaOp mma;
  tile::LoadWeightOp weight;
  kernel.walk([&](tile::ScaledMmaOp op) { mma = op; });
  kernel.walk([&](tile::LoadWeightOp op) { weight = op; });
  tile::QuantizeOp quant;
  kernel.walk([&](tile::QuantizeOp op) { quant = op; });
  if (!mma && !weight && quant) {
    // The quantizer: one BM x BK block, no MMA, no shared memory to speak of.
    Config cfg;
    cfg.bm = quant.getInput().getType().getRows();
    cfg.bk = quant.getInput().getType().getCols();
    cfg.quantizeOnly = true;
    if ((cfg.bm != 8 && cfg.bm != 16 && cfg.bm != 32 && cfg.bm != 64) ||
        (cfg.bk != 128 && cfg.bk != 256))
      return quant.emitOpError() << "on sm_90a the quantizer takes 8, 16, 32 or 64 rows of 128 "
                                    "or 256 elements, got "
                                 << cfg.bm << "x" << cfg.bk;
    // qdq_mxfp4's BM 64 blocks (large M: throughput) leave through shared
    // memory and bulk copies; smaller ones (latency) store directly.
    cfg.stagesImage = quant.getQdq() && cfg.bm == 64;
    if (auto splits = kernel->getAttrOfType<IntegerAttr>(tile::kImageStreamAttr)) {
      // The streamed image (Sm90ImageStream.cpp): pieces of BM x 128 stored
      // directly, in the K order of the GEMM's splits.
      auto load = quant.getInput().getDefiningOp<tile::LoadOp>();
      std::optional<int64_t> ld = load ? getConstantIntValue(load.getLd()) : std::nullopt;
      cfg.imageStream = splits.getInt();
      cfg.imageSteps = ld ? *ld / 128 : 0;
      if (!quant.getQdq() || cfg.stagesImage || cfg.bk != 128 || !ld || *ld % 128 != 0 ||
          cfg.imageStream < 1 || cfg.imageSteps % cfg.imageStream != 0)
        return kernel.emitError() << "the streamed image's quantizer writes the image (qdq) in "
                                     "BM 8..32 x 128 pieces of rows of a constant K that its "
                                     "split count divides into whole 128-K steps";
    }
    return cfg;
  }
  if (!mma || !weight)
    return kernel.emitError() << "kernel '" << kernel.getSymName()
                              << "' has no mxtile.scaled_mma fed by mxtile.load_weight (and is "
                                 "not a quantizer)";
  Config cfg;
  cfg.bm = mma.getA().getType().getRows();
  cfg.bk = mma.getA().getType().getCols();
  cfg.bn = mma.getB().getType().getRows();
  if (auto warps = kernel->getAttrOfType<IntegerAttr>(tile::kWarpSplitKAttr)) {
    // The warp-split variant: its own K loop and shared memory, nothing
    // below applies but the weight layout.
    cfg.warpSplitK = warps.getInt();
    bool other = false;
    kernel.walk([&](Operation *op) {
      other |= isa<tile::LoadQdqOp, tile::LoadMxOp>(op);
      if (auto q = dyn_cast<tile::QuantizeOp>(op))
        other |= q.getDumpData() || q.getQdq();
    });
    other |= kernel->hasAttr(tile::kDecodeStepsAttr) || kernel->hasAttr(tile::kStagesAttr) ||
             kernel->hasAttr(tile::kPersistentAttr) || kernel->hasAttr(tile::kStreamKAttr) ||
             kernel->hasAttr(tile::kTwoWarpgroupsAttr);
    if (other || cfg.bm != 8 || cfg.bk != 128 || (cfg.bn != 16 && cfg.bn != 32) ||
        cfg.warpSplitK < 1 || cfg.warpSplitK > sm90::kMaxSplitKWarps ||
        weight.getK() / 128 < cfg.warpSplitK)
      return kernel.emitError()
             << "the warp-split variant quantizes inline (mxtile.load -> mxtile.quantize, no "
                "dump) at BM 8, BN 16 or 32 and BK 128, with 1.."
             << sm90::kMaxSplitKWarps
             << " warps of at least one 128-K chunk each and no other variant";
    if (weight.getLayout() != tile::WeightLayoutKind::sm90_mma16)
      return weight.emitOpError() << "on sm_90a weights must use the sm90_mma16 layout";
    cfg.foldedScales = kernel->hasAttr(tile::kWeightScalesBelow128Attr);
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
  if (cfg.bn != sm90::kTileRows && cfg.bn != sm90::kNarrowTileRows && cfg.bn != sm90::kWideTileRows)
    return mma.emitOpError() << "on sm_90a the N tile must be 128 or 64 (4 warps x 32 or 16 "
                                "rows), or 192 (12 warps x 16) on the activation image, got "
                             << cfg.bn;
  bool staged = false;
  kernel.walk([&](tile::LoadQdqOp) { staged = true; });
  if (cfg.bm != 8 && cfg.bm != 16 && cfg.bm != 32 && cfg.bm != 64 && cfg.bm != 128 &&
      !(staged && (cfg.bm == 192 || cfg.bm == 256)))
    return mma.emitOpError() << "on sm_90a the M tile must be 8, 16, 32, 64 or 128 (192 or 256 "
                                "on the activation image), got "
                             << cfg.bm;
  // Activation buffers of BM x BK (the image's kernels stage them instead).
  if ((cfg.bk != 128 && cfg.bk != 256) || (!staged && cfg.bm * cfg.bk > 128 * 128) ||
      (cfg.bm > 128 && cfg.bk != 128))
    return mma.emitOpError() << "on sm_90a the K tile must be 128 or 256 with BM x BK <= 16384 "
                                "(64 KiB of shared memory; BM 192 and 256: 128), got BK = "
                             << cfg.bk;
  if (weight.getLayout() != tile::WeightLayoutKind::sm90_mma16)
    return weight.emitOpError() << "on sm_90a weights must use the sm90_mma16 layout";
  // The MXFP4-activation kernel with 128 tokens fits 128 registers without
  // spills or serialized wgmmas (ptxas report, test/Target): two workgroups
  // (16 warps) per SM instead of one. BM 64 under the same cap has its
  // wgmmas serialized (ptxas C7511), so it keeps its registers.
  bool preQuantized = false;
  kernel.walk([&](tile::LoadMxOp) { preQuantized = true; });
  if (preQuantized && cfg.bm == 128)
    cfg.maxRegisters = 128;
  // On the activation image, BM 128's five stages leave room for one
  // workgroup per SM: its 256 threads may take every register. With fewer
  // stages two fit, if each takes at most 128 registers a thread.
  kernel.walk([&](tile::LoadQdqOp) { cfg.stagedActivations = true; });
  cfg.foldedScales = kernel->hasAttr(tile::kWeightScalesBelow128Attr);
  if (auto stages = kernel->getAttrOfType<IntegerAttr>(tile::kStagesAttr))
    cfg.stages = stages.getInt();
  cfg.twoWarpgroups = kernel->hasAttr(tile::kTwoWarpgroupsAttr);
  if (auto steps = kernel->getAttrOfType<IntegerAttr>(tile::kDecodeStepsAttr)) {
    cfg.decodeSteps = steps.getInt();
    if (cfg.stagedActivations || cfg.decodeSteps < 2 || cfg.bm >= 128 || cfg.stages != 0)
      return kernel.emitError() << "the decode variant quantizes inline (mxtile.load -> "
                                   "mxtile.quantize), below BM 128, with no stage count and at "
                                   "least two K steps";
    // BM 8 / 16 x BK 128: four 128-thread workgroups per SM (decode's
    // split-K grids fill one wave with four) at the cost of a spilled word;
    // larger tiles hold too many registers in flight for that cap. BM 8 x
    // BN 64 with four K steps of weights in flight (Sm90DecodeKLoop.cpp)
    // fits 80 with no spill (six workgroups a SM); at 72 the fourth step
    // spilled and ptxas serialized the wgmmas (C7512), and two steps ahead
    // at 72 (seven a SM) ran 2-4 % slower. BM 16 x BN 64 (the rule's tile
    // up to M = 32) fits 96 with no spill (124 uncapped): five a SM, which
    // multi-wave grids gain from (7168x4224 M = 16: 19.4 -> 17.4 us) and
    // the rule's one-wave grids run the same (docs/Performance.md).
    if (cfg.bm <= 16 && cfg.bk == 128) {
      const bool narrow = cfg.bn == sm90::kNarrowTileRows;
      cfg.maxRegisters = narrow ? (cfg.bm <= 8 ? 80 : 96) : 128;
    }
    if (auto groups = kernel->getAttrOfType<IntegerAttr>(tile::kDecodeGroupsAttr)) {
      cfg.decodeGroups = groups.getInt();
      if (cfg.decodeGroups < 2 || cfg.decodeGroups > sm90::kMaxDecodeGroups ||
          cfg.decodeSteps % cfg.decodeGroups != 0 || cfg.decodeSteps < 2 * cfg.decodeGroups)
        return kernel.emitError() << "the decode variant splits its " << cfg.decodeSteps
                                  << " K steps among 2.." << sm90::kMaxDecodeGroups
                                  << " warpgroups, at least two steps each, got "
                                  << cfg.decodeGroups;
      // The workgroup's registers fit one SM (65536; ptxas takes at most 255
      // a thread), in whole multiples of 8.
      const int64_t fit = std::min<int64_t>(65536 / cfg.blockThreads(), 255) / 8 * 8;
      cfg.maxRegisters = cfg.maxRegisters ? std::min(cfg.maxRegisters, fit) : fit;
    }
  }
  if (auto tiles = kernel->getAttrOfType<IntegerAttr>(tile::kPersistentAttr)) {
    cfg.persistentTilesX = tiles.getInt();
    if (!cfg.stagedActivations || cfg.persistentTilesX < 1)
      return kernel.emitError() << "a persistent grid needs the activation image "
                                   "(mxtile.load_qdq) and a positive N tile count";
  }
  if (auto tiles = kernel->getAttrOfType<IntegerAttr>(tile::kStreamKAttr)) {
    cfg.persistentTilesX = tiles.getInt();
    cfg.streamK = true;
    if (!cfg.stagedActivations || cfg.persistentTilesX < 1 ||
        kernel->hasAttr(tile::kPersistentAttr) || (cfg.bm != 128 && cfg.bm != 256))
      return kernel.emitError() << "stream-K needs the activation image (mxtile.load_qdq), BM "
                                   "128 or 256, a positive N tile count and no persistent grid";
  }
  if (cfg.bn == sm90::kWideTileRows &&
      (!cfg.stagedActivations || cfg.bm != 128 || cfg.bk != 128 || cfg.tileLoop()))
    return mma.emitOpError() << "on sm_90a the N tile 192 takes the activation image "
                                "(mxtile.load_qdq), BM 128 and BK 128 and one tile per "
                                "workgroup, got BM "
                             << cfg.bm << ", BK " << cfg.bk;
  // BN 192's 384 threads fit the register file only under 170 registers.
  if (cfg.bn == sm90::kWideTileRows)
    cfg.maxRegisters = 168;
  if (cfg.bn == sm90::kNarrowTileRows && (cfg.bm > 128 || cfg.twoWarpgroups))
    return mma.emitOpError() << "on sm_90a the N tile 64 takes one warpgroup and BM <= 128, got "
                                "BM "
                             << cfg.bm << (cfg.twoWarpgroups ? " with two warpgroups" : "");
  if (cfg.twoWarpgroups && !cfg.stagedActivations)
    return kernel.emitError() << "two warpgroups below BM 128 need the activation image "
                                 "(mxtile.load_qdq): the inline quantizer splits its chunks "
                                 "over one warpgroup";
  if (cfg.stagedActivations && cfg.bm == 128 && sm90::workgroupsPerSm(cfg.shared()) >= 2)
    cfg.maxRegisters = 128;
  if (auto rows = kernel->getAttrOfType<IntegerAttr>(tile::kImageStreamAttr)) {
    // The streamed image (Sm90ImageStream.cpp): each chunk of a block is
    // read once by one workgroup of every N column.
    tile::StoreOp store;
    kernel.walk([&](tile::StoreOp op) { store = op; });
    std::optional<int64_t> n = store ? getConstantIntValue(store.getLd()) : std::nullopt;
    cfg.imageStream = rows.getInt();
    cfg.imageSteps = weight.getK() / 128;
    cfg.imageReaders = n ? *n / cfg.bn : 0;
    if (!cfg.stagedActivations || cfg.bm != sm90::kImageBlockRows || cfg.tileLoop() || !n ||
        (cfg.imageStream != 8 && cfg.imageStream != 16 && cfg.imageStream != 32))
      return kernel.emitError() << "the streamed image takes the activation image "
                                   "(mxtile.load_qdq) at BM 128, one tile per workgroup, "
                                   "a constant N and quantizer pieces of 8, 16 or 32 rows";
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
      if (failed(lowerKernel(kernel, gpuModule)))
        return signalPassFailure();
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
      } else if (t.isSignlessInteger(32) || t.isIndex()) {
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
    ob.setInsertionPointToEnd(gpuModule.getBody());
    auto func = gpu::GPUFuncOp::create(ob, kernel.getLoc(), kernel.getSymName(),
                                       ob.getFunctionType(argTypes, {}),
                                       dynamic ? TypeRange{} : TypeRange{smemType}, TypeRange{});
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
    // wgmma matrix descriptors address 16-byte aligned core matrices; 128 B
    // keeps every slab on its own bank-aligned boundary.
    if (!dynamic)
      func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                       ob.getI64IntegerAttr(128));
    func.setKnownBlockSizeAttr(ob.getDenseI32ArrayAttr({int32_t(cfg->blockThreads()), 1, 1}));
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
