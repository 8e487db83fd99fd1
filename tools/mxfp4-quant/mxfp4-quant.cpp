//===- mxfp4-quant.cpp - Quantize on the CPU and report the error ---------===//
//
// Quantizes a BF16 matrix with each scale-rounding mode and prints a table of
// error statistics (the first piece of the README's main job), or, with
// --amax, prints the E8M0 code each mode gives one block maximum.
//
//   mxfp4-quant --rows=2048 --k=7168 --seed=1
//   mxfp4-quant --amax=1.7
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Support/BF16.h"
#include "mxfp4/Support/Parallel.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mxfp4;
namespace cl = llvm::cl;

static cl::opt<int64_t> rowsOpt("rows", cl::desc("rows of the matrix"), cl::init(2048),
                                cl::cat(tools::toolCategory()));
static cl::opt<int64_t> kOpt("k", cl::desc("K (a multiple of 32)"), cl::init(7168),
                             cl::cat(tools::toolCategory()));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("random seed (default: fresh)"), cl::init(0),
                                 cl::cat(tools::toolCategory()));
static cl::opt<std::string> amaxOpt("amax",
                                    cl::desc("print each mode's E8M0 code for this block "
                                             "maximum (a float, or inf/nan) and exit"),
                                    cl::init(""), cl::cat(tools::toolCategory()));

/// Activations look like LLM hidden states: mostly N(0,1), a few channels with
/// large outliers (what makes block scaling matter).
static std::vector<uint16_t> makeActivations(int64_t rows, int64_t k, uint64_t seed) {
  std::vector<uint16_t> x(size_t(rows * k));
  parallelFor(rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * uint64_t(r + 1)));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (int64_t c = 0; c < k; ++c) {
        float v = normal(rng);
        if (c % 997 == 13)
          v *= 40.0f; // outlier channel
        x[size_t(r * k + c)] = floatToBf16(v);
      }
    }
  });
  return x;
}

static int printAmaxCodes(llvm::StringRef text) {
  float amax;
  if (text.equals_insensitive("inf"))
    amax = INFINITY;
  else if (text.equals_insensitive("nan"))
    amax = NAN;
  else if (double d; !text.getAsDouble(d))
    amax = float(d);
  else {
    llvm::errs() << "mxfp4-quant: --amax expects a number, inf or nan; got '" << text << "'\n";
    return 1;
  }
  for (ScaleRounding mode : allScaleRoundings()) {
    uint8_t code = scaleFromAmax(floatBits(std::fabs(amax)), mode);
    llvm::outs() << llvm::format("%-8s code %3u  scale ", toString(mode).data(), code);
    if (code == kE8M0NaN)
      llvm::outs() << "NaN\n";
    else
      llvm::outs() << "2^" << int(code) - 127 << "\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::parseToolOptions(argc, argv, "mxfp4-jit CPU quantizer\n");
  if (!amaxOpt.empty())
    return printAmaxCodes(amaxOpt);

  // Checked before anything is allocated: the table needs at least one
  // block, and the matrix (bf16 plus the float64 reference) must fit.
  constexpr int64_t kMaxElements = int64_t(1) << 28;
  if (rowsOpt < 1 || rowsOpt > kMaxElements) {
    llvm::errs() << "mxfp4-quant: --rows must be in [1, 2^28], got " << rowsOpt << "\n";
    return 1;
  }
  if (kOpt < 32 || kOpt % 32 != 0 || kOpt > kMaxElements) {
    llvm::errs() << "mxfp4-quant: --k must be a positive multiple of 32 up to 2^28, got " << kOpt
                 << "\n";
    return 1;
  }
  if (rowsOpt > kMaxElements / kOpt) {
    llvm::errs() << "mxfp4-quant: --rows x --k must be at most 2^28 elements, got " << rowsOpt
                 << " x " << kOpt << "\n";
    return 1;
  }
  uint64_t seed = seedOpt ? uint64_t(seedOpt) : std::random_device{}();
  llvm::outs() << "BF16 activations [" << rowsOpt << ", " << kOpt << "], seed " << seed
               << ", " << hostThreadCount() << " threads\n";
  std::vector<uint16_t> x = makeActivations(rowsOpt, kOpt, seed);
  llvm::outs() << llvm::format("%-8s %10s %11s %10s %9s %9s\n", "mode", "rel-L2", "max|err|",
                               "saturated", "mean-exp", "ms");
  for (ScaleRounding mode : allScaleRoundings()) {
    auto t0 = std::chrono::steady_clock::now();
    Expected<MxMatrix> q = quantizeBf16(x, rowsOpt, kOpt, mode);
    auto t1 = std::chrono::steady_clock::now();
    if (!q) {
      llvm::errs() << "mxfp4-quant: " << q.takeError().message() << "\n";
      return 1;
    }
    double errSq = 0, refSq = 0, maxErr = 0, expSum = 0;
    int64_t saturated = 0;
    for (int64_t r = 0; r < q->rows; ++r)
      for (int64_t c = 0; c < q->cols; ++c) {
        double ref = bf16ToFloat(x[size_t(r * q->cols + c)]);
        double got = q->at(r, c);
        double scale = decodeE8M0(q->scales[size_t(r * q->scalesPerRow() + c / kBlockSize)]);
        saturated += std::fabs(ref) / scale > kE2M1Max;
        errSq += (got - ref) * (got - ref);
        refSq += ref * ref;
        maxErr = std::max(maxErr, std::fabs(got - ref));
      }
    for (uint8_t s : q->scales)
      expSum += int(s) - 127;
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    llvm::outs() << llvm::format("%-8s %9.4f%% %11.4g %9.4f%% %9.3f %9.1f\n",
                                 toString(mode).data(), 100.0 * std::sqrt(errSq / refSq), maxErr,
                                 100.0 * double(saturated) / double(x.size()),
                                 expSum / double(q->scales.size()), ms);
  }
  return 0;
}
