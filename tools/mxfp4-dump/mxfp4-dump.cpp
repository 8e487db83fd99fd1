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

#include "ToolOptions.h"

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/Kernels/MoeSpecs.h"
#include "mxfp4/Kernels/Schedule.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[tile program .mlir, - for stdin]"),
                                      cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> opName("op",
                                   cl::desc("kernel to build: gemm_a4w4, gemm_mxa4w4, gemm_qdqa4w4 "
                                            "(sm_90a), quant_mxfp4 or qdq_mxfp4 (sm_90a; --n "
                                            "is ignored), moe_sort (--experts, --topk, "
                                            "--block-m), moe_stage1, moe_stage2 (also "
                                            "--hidden, --inter, --activation)"),
                                   cl::init("gemm_a4w4"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> archName("arch", cl::desc("gfx950, gfx1250 or sm_90a"),
                                     cl::init("gfx950"), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> nOpt("n", cl::desc("N (output columns)"), cl::init(8448),
                             cl::cat(tools::toolCategory()));
static cl::opt<int64_t> kOpt("k", cl::desc("K (reduction length)"), cl::init(7168),
                             cl::cat(tools::toolCategory()));
static cl::opt<int64_t> expertsOpt("experts", cl::desc("moe_sort: E (default: seed 002's 896)"),
                                   cl::init(896), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> topkOpt("topk", cl::desc("moe_sort: topk (default: seed 002's 16)"),
                                cl::init(16), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> blockMOpt("block-m", cl::desc("moe_*: block_m"), cl::init(32),
                                  cl::cat(tools::toolCategory()));
static cl::opt<int64_t> hiddenOpt("hidden", cl::desc("moe_stage*: H (default: seed 002's 3584)"),
                                  cl::init(3584), cl::cat(tools::toolCategory()));
static cl::opt<int64_t> interOpt("inter", cl::desc("moe_stage*: inter (default: seed 002's 768)"),
                                 cl::init(768), cl::cat(tools::toolCategory()));
static cl::opt<std::string> activationName("activation",
                                           cl::desc("moe_stage1: silu, swiglu or situv2"),
                                           cl::init("situv2"), cl::cat(tools::toolCategory()));
static cl::opt<bool> fuseActivationOpt(
    "fuse-activation",
    cl::desc("moe_stage1: the activation in moe_gemm's epilogue (default); =false: "
             "moe_gemm stores bf16 and moe_actq quantizes"),
    cl::init(true), cl::cat(tools::toolCategory()));
static cl::opt<std::string> combineName(
    "combine",
    cl::desc("moe_stage2: reduce (per-slot rows, then moe_reduce; default) or atomic (rows "
             "added to an f32 accumulator in moe_gemm's epilogue, then moe_cast)"),
    cl::init("reduce"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> nameOpt("name",
                                    cl::desc("build the kernel of this canonical name (instead of "
                                             "--op, --n, --k and the schedule flags)"),
                                    cl::init(""), cl::cat(tools::toolCategory()));
static cl::opt<std::string> roundingName("rounding", cl::desc("roundup, even, floor, nearest"),
                                         cl::init("roundup"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> emitName("emit", cl::desc("tile, gpu, llvm, isa or obj"),
                                     cl::init("isa"), cl::cat(tools::toolCategory()));
static cl::opt<std::string> outputFile("o", cl::desc("output file (default stdout)"), cl::init("-"),
                                       cl::cat(tools::toolCategory()));

/// One flag per field of the schedule (kScheduleFields, Kernels/Schedule.h),
/// `--<flag>=`: numbers and counts take a value, flags none. A field whose
/// flag is not given keeps the target's default tile (makeGemmA4W4Spec);
/// BM, which makeGemmA4W4Spec takes, defaults to the table's 16.
class ScheduleFlags {
public:
  ScheduleFlags() {
    for (const ScheduleField &f : kScheduleFields) {
      llvm::StringRef name(f.flag.data(), f.flag.size()), help(f.help.data(), f.help.size());
      Flag flag{&f};
      if (f.boolean)
        flag.boolean =
            std::make_unique<cl::opt<bool>>(name, cl::desc(help), cl::cat(tools::toolCategory()));
      else
        flag.number = std::make_unique<cl::opt<int64_t>>(
            name, cl::desc(help), cl::init(f.defaultValue), cl::cat(tools::toolCategory()));
      flags.push_back(std::move(flag));
    }
  }
  int64_t bm() const {
    for (const Flag &f : flags)
      if (f.field->number == &Schedule::bm)
        return *f.number;
    return kScheduleFields[0].defaultValue;
  }
  /// Sets the fields whose flags were given.
  void apply(Schedule &s) const {
    for (const Flag &f : flags) {
      if (f.boolean && f.boolean->getNumOccurrences())
        f.field->set(s, *f.boolean);
      if (f.number && f.number->getNumOccurrences())
        f.field->set(s, *f.number);
    }
  }

private:
  struct Flag {
    const ScheduleField *field;
    std::unique_ptr<cl::opt<int64_t>> number;
    std::unique_ptr<cl::opt<bool>> boolean;
  };
  std::vector<Flag> flags;
};

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mxfp4-dump: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  ScheduleFlags scheduleFlags;
  tools::parseToolOptions(argc, argv, "mxfp4-jit code dumper\n");

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
  } else if (!nameOpt.empty()) {
    Expected<KernelSpec> spec = parseKernelName(nameOpt);
    if (!spec)
      return fail(spec.takeError().message());
    if (spec->arch != *arch)
      return fail("--name is a kernel for " + std::string(toString(spec->arch)) +
                  "; give --arch=" + std::string(toString(spec->arch)));
    module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
    buildKernel(*module, *spec);
  } else if (opName == "moe_sort") {
    // Both sorting kernels, in one module.
    Expected<std::array<KernelSpec, 2>> specs =
        makeMoeSortSpecs(*arch, expertsOpt, topkOpt, blockMOpt);
    if (!specs)
      return fail(specs.takeError().message());
    module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
    for (const KernelSpec &spec : *specs)
      buildKernel(*module, spec);
  } else if (opName == "moe_stage1" || opName == "moe_stage2") {
    // A stage's kernels, in launch order, in one module.
    std::optional<Activation> act;
    for (Activation a : {Activation::Silu, Activation::Swiglu, Activation::Situv2})
      if (activationName == toString(a))
        act = a;
    if (!act)
      return fail("unknown --activation '" + activationName + "'; expected silu, swiglu or situv2");
    MoeKernelShape shape{expertsOpt, topkOpt, hiddenOpt, interOpt, blockMOpt, *act, *rounding};
    shape.fuseActivation = fuseActivationOpt;
    if (combineName != "reduce" && combineName != "atomic")
      return fail("unknown --combine '" + combineName + "'; expected reduce or atomic");
    shape.atomicStage2 = combineName == "atomic";
    Expected<std::vector<KernelSpec>> specs =
        makeMoeStageSpecs(*arch, opName == "moe_stage1" ? 1 : 2, shape);
    if (!specs)
      return fail(specs.takeError().message());
    module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
    for (const KernelSpec &spec : *specs)
      buildKernel(*module, spec);
  } else {
    std::optional<OpKind> op;
    for (OpKind o : {OpKind::GemmA4W4, OpKind::GemmMxA4W4, OpKind::GemmQdqA4W4,
                     OpKind::QuantizeMx, OpKind::QdqMx})
      if (opName == toString(o))
        op = o;
    if (!op)
      return fail("unknown --op '" + opName +
                  "'; expected gemm_a4w4, gemm_mxa4w4, gemm_qdqa4w4, quant_mxfp4, qdq_mxfp4, "
                  "moe_sort, moe_stage1 or moe_stage2");
    const int64_t bm = scheduleFlags.bm();
    Expected<KernelSpec> spec = isQuantizer(*op)
                                    ? makeQuantizeMxSpec(*arch, kOpt, bm, *rounding, *op)
                                    : makeGemmA4W4Spec(*arch, nOpt, kOpt, bm, *rounding,
                                                       Activation::None, {0.0f, 0.0f}, *op);
    if (!spec)
      return fail(spec.takeError().message());
    scheduleFlags.apply(spec->schedule());
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
