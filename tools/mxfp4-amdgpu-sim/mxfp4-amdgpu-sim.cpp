//===- mxfp4-amdgpu-sim.cpp - Run an AMD kernel on the CPU and check it ---===//
//
// JITs a gfx950 or gfx1250 dense GEMM, runs its LLVM IR in the simulator
// (AmdSim/Simulator.h) on random data through the public API, and prints
// PASS or FAIL with the error against the float64 reference (GemmCheck.h).
//
//   mxfp4-amdgpu-sim --arch=gfx950 --op=gemm_a4w4 --n=256 --k=512 --m=17 [--split-k=2]
//
// Exit codes: 0 PASS, 1 FAIL, 2 bad arguments or a kernel that could not run.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mxfp4/AmdSim/GemmCheck.h"
#include "mxfp4/Kernels/TargetInfo.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<std::string> archOpt("arch", cl::desc("gfx950 or gfx1250"), cl::init("gfx950"),
                                    cl::cat(tools::toolCategory()));
static cl::opt<std::string> opOpt("op", cl::desc("kernel to run: gemm_a4w4"), cl::init("gemm_a4w4"),
                                  cl::cat(tools::toolCategory()));
static cl::opt<int64_t> nOpt("n", cl::desc("N (output columns)"), cl::init(256),
                             cl::cat(tools::toolCategory()));
static cl::opt<int64_t> kOpt("k", cl::desc("K (a multiple of 32)"), cl::init(512),
                             cl::cat(tools::toolCategory()));
static cl::opt<int64_t> mOpt("m", cl::desc("M (activation rows)"), cl::init(17),
                             cl::cat(tools::toolCategory()));
static cl::opt<std::string> roundingOpt("rounding",
                                        cl::desc("activation scale rounding: roundup, even, "
                                                 "floor or nearest"),
                                        cl::init("roundup"), cl::cat(tools::toolCategory()));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("random seed"), cl::init(1),
                                 cl::cat(tools::toolCategory()));
static cl::opt<int64_t> bmOpt("bm", cl::desc("M tile (0: dispatch decides)"), cl::init(0),
                              cl::cat(tools::toolCategory()));
static cl::opt<int64_t> bkOpt("bk", cl::desc("K step (0: dispatch decides)"), cl::init(0),
                              cl::cat(tools::toolCategory()));
static cl::opt<int64_t> splitKOpt("split-k",
                                  cl::desc("workgroups splitting K (0: dispatch decides)"),
                                  cl::init(0), cl::cat(tools::toolCategory()));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::parseToolOptions(argc, argv,
                          "mxfp4-amdgpu-sim: runs an AMD kernel's LLVM IR on the CPU and checks "
                          "its results\n\nExit codes: 0 PASS, 1 FAIL, 2 bad arguments or a kernel "
                          "the simulator could not run.\n");
  auto usage = [](const std::string &message) {
    llvm::errs() << "mxfp4-amdgpu-sim: " << message << "\n";
    return 2;
  };
  // lld, run in process by every AMD compile, resets cl::opts: copy them now.
  const std::string arch = archOpt, roundingName = roundingOpt;
  amdsim::GemmCheckOptions o;
  if (arch == "gfx950")
    o.arch = Arch::GFX950;
  else if (arch == "gfx1250")
    o.arch = Arch::GFX1250;
  else
    return usage("--arch must be gfx950 or gfx1250, got " + printable(archOpt));
  if (opOpt != "gemm_a4w4")
    return usage("--op must be gemm_a4w4, got " + printable(opOpt));
  std::optional<ScaleRounding> rounding = parseScaleRounding(roundingOpt);
  if (!rounding)
    return usage("--rounding must be roundup, even, floor or nearest, got " +
                 printable(roundingOpt));
  o.rounding = *rounding;
  o.n = nOpt;
  o.k = kOpt;
  o.m = mOpt;
  o.seed = seedOpt;
  if (bmOpt < 0 || bkOpt < 0 || splitKOpt < 0)
    return usage("--bm, --bk and --split-k must be >= 0");
  if (splitKOpt)
    o.splitK = splitKOpt;
  if (bmOpt)
    o.bm = bmOpt;
  if (bkOpt)
    o.bk = bkOpt;

  auto t0 = std::chrono::steady_clock::now();
  Expected<amdsim::GemmCheckResult> r = amdsim::checkGemmA4W4(o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r)
    return usage(r.takeError().message());
  llvm::outs() << (r->passed() ? "PASS" : "FAIL") << " " << arch << " " << r->kernel << " M=" << o.m
               << " N=" << o.n << " K=" << o.k << " rounding=" << roundingName << " seed=" << o.seed
               << "\n"
               << llvm::format("  vs float64 QDQ: rel-L2 %.3e, max |err|/sum|ab| %.3e, "
                               "%lld out of tolerance\n",
                               r->relL2, r->maxNormalized, (long long)r->outOfTolerance)
               << "  guard row after C: " << (r->guardIntact ? "intact" : "WRITTEN") << "\n"
               << "  second launch, workgroups in another order: "
               << (r->repeatable ? "same bits" : "DIFFERENT BITS") << "\n"
               << "  inline-quantized activations (" << r->quantizedColumns
               << " columns) vs the CPU quantizer: " << r->quantizedMismatches
               << " elements differ\n"
               << llvm::format("  simulated %llu workgroups, %llu lane instructions, %llu wave "
                               "ops in %.2f s\n",
                               (unsigned long long)r->stats.workgroups,
                               (unsigned long long)r->stats.laneInstructions,
                               (unsigned long long)r->stats.waveOps, seconds);
  if (!r->firstFailure.empty())
    llvm::outs() << "  first failure: " << r->firstFailure << "\n";
  return r->passed() ? 0 : 1;
}
