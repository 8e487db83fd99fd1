//===- mxfp4-dump.cpp - Show the code mxfp4-jit generates ------------------===//
//
// Builds a kernel from its parameters (or reads a tile program) and prints it
// at any stage of the compile:
//
//   mxfp4-dump --op=gemm_a4w4 --arch=gfx950 --n=8448 --k=7168 --bm=16 --emit=isa
//   mxfp4-dump --op=gemm_a4w4 --arch=gfx1250 ... --emit=obj -o k.hsaco
//   mxfp4-opt k.mlir | mxfp4-dump --arch=gfx950 --emit=isa -
//
//   --emit=tile  the mxtile program        --emit=gpu  after mxtile-to-amdgpu
//   --emit=llvm  LLVM IR (optimized)       --emit=isa  assembly
//   --emit=obj   a loadable HSA code object
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[tile program .mlir, - for stdin]"),
                                      cl::init(""));
static cl::opt<std::string> opName("op",
                                   cl::desc("kernel to build: gemm_a4w4, gemm_mxa4w4, gemm_qdqa4w4 "
                                            "(sm_90a), quant_mxfp4 or qdq_mxfp4 (sm_90a; --n "
                                            "is ignored)"),
                                   cl::init("gemm_a4w4"));
static cl::opt<std::string> archName("arch", cl::desc("gfx950, gfx1250 or sm_90a"),
                                     cl::init("gfx950"));
static cl::opt<int64_t> nOpt("n", cl::desc("N (output columns)"), cl::init(8448));
static cl::opt<int64_t> kOpt("k", cl::desc("K (reduction length)"), cl::init(7168));
static cl::opt<int64_t> bmOpt("bm", cl::desc("M tile: 16 or 64"), cl::init(16));
static cl::opt<int64_t> splitKOpt("split-k", cl::desc("split-K factor (sm_90a)"), cl::init(1));
static cl::opt<int64_t> bkOpt("bk", cl::desc("K tile (default: the arch's)"), cl::init(0));
static cl::opt<int64_t> bnOpt("bn", cl::desc("N tile (default: the arch's; sm_90a: 128 or 64)"),
                              cl::init(0));
static cl::opt<bool> twoWgOpt("two-warpgroups",
                              cl::desc("sm_90a gemm_qdqa4w4 below BM 128: two warpgroups"),
                              cl::init(false));
static cl::opt<bool> persistentOpt("persistent",
                                   cl::desc("sm_90a gemm_qdqa4w4: a persistent grid"),
                                   cl::init(false));
static cl::opt<bool> decodeOpt("decode",
                               cl::desc("sm_90a gemm_a4w4 below BM 128: the decode variant"),
                               cl::init(false));
static cl::opt<int64_t> decodeGroupsOpt("decode-groups",
                                        cl::desc("with --decode: warpgroups splitting each "
                                                 "workgroup's K steps (1..4)"),
                                        cl::init(1));
static cl::opt<int64_t> warpSplitKOpt("warp-split-k",
                                      cl::desc("sm_90a gemm_a4w4 at BM 8, BN 16 or 32: warps "
                                               "splitting K with mma.sync (0: off)"),
                                      cl::init(0));
static cl::opt<int64_t> imageStreamOpt(
    "image-stream",
    cl::desc("sm_90a streamed activation image: on qdq_mxfp4 the GEMM's split count, on "
             "gemm_qdqa4w4 (BM 128) the quantizer's rows per piece (0: off)"),
    cl::init(0));
static cl::opt<bool> streamKOpt("stream-k",
                                cl::desc("sm_90a gemm_qdqa4w4 of BM 128 or 256: stream-K"),
                                cl::init(false));
static cl::opt<int64_t> stagesOpt("stages", cl::desc("sm_90a TMA stages (default: the tile's)"),
                                  cl::init(0));
static cl::opt<bool> foldOpt("folded-scales",
                             cl::desc("weight scales all below 128: one multiply (sm_90a)"),
                             cl::init(false));
static cl::opt<std::string> roundingName("rounding", cl::desc("roundup, even, floor, nearest"),
                                         cl::init("roundup"));
static cl::opt<std::string> emitName("emit", cl::desc("tile, gpu, llvm, isa or obj"),
                                     cl::init("isa"));
static cl::opt<std::string> outputFile("o", cl::desc("output file (default stdout)"),
                                       cl::init("-"));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mxfp4-dump: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "mxfp4-jit code dumper\n");

  std::optional<Arch> arch = parseArch(archName);
  if (!arch)
    return fail("unknown --arch '" + archName + "'; expected gfx950, gfx1250 or sm_90a");
  std::optional<EmitKind> emit = parseEmitKind(emitName);
  if (!emit)
    return fail("unknown --emit '" + emitName + "'; expected tile, gpu, llvm, isa or obj");
  std::optional<ScaleRounding> rounding = parseScaleRounding(roundingName);
  if (!rounding)
    return fail("unknown --rounding '" + roundingName +
                "'; expected roundup, even, floor or nearest");

  mlir::DialectRegistry registry;
  registerMxfp4Dialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (!inputFile.empty()) {
    std::string error;
    auto file = mlir::openInputFile(inputFile, &error);
    if (!file)
      return fail(error);
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(sm, &ctx);
    if (!module)
      return fail("cannot parse " + inputFile);
  } else {
    std::optional<OpKind> op;
    for (OpKind o : {OpKind::GemmA4W4, OpKind::GemmMxA4W4, OpKind::GemmQdqA4W4,
                     OpKind::QuantizeMx, OpKind::QdqMx})
      if (opName == toString(o))
        op = o;
    if (!op)
      return fail("unknown --op '" + opName +
                  "'; expected gemm_a4w4, gemm_mxa4w4, gemm_qdqa4w4, quant_mxfp4 or qdq_mxfp4");
    Expected<KernelSpec> spec = isQuantizer(*op)
                                    ? makeQuantizeMxSpec(*arch, kOpt, bmOpt, *rounding, *op)
                                    : makeGemmA4W4Spec(*arch, nOpt, kOpt, bmOpt, *rounding,
                                                       Activation::None, {0.0f, 0.0f}, *op);
    if (!spec)
      return fail(spec.takeError().message());
    spec->splitK = splitKOpt;
    if (bkOpt)
      spec->bk = bkOpt;
    if (bnOpt)
      spec->bn = bnOpt;
    spec->stages = stagesOpt;
    spec->twoWarpgroups = twoWgOpt;
    spec->persistent = persistentOpt;
    spec->decode = decodeOpt;
    spec->decodeGroups = decodeGroupsOpt;
    spec->streamK = streamKOpt;
    spec->warpSplitK = warpSplitKOpt;
    spec->imageStream = imageStreamOpt;
    spec->foldedScales = foldOpt;
    if (Error e = verifyKernelSpec(*spec))
      return fail(e.message());
    module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
    buildKernel(*module, *spec);
  }

  // lld (run in process for --emit=obj) resets every cl::opt: read ours first.
  std::string output = outputFile;
  llvm::Expected<std::string> out = compileModule(*module, *arch, *emit);
  if (!out)
    return fail(llvm::toString(out.takeError()));
  std::string error;
  auto file = mlir::openOutputFile(output, &error);
  if (!file)
    return fail(error);
  file->os() << *out;
  file->keep();
  return 0;
}
