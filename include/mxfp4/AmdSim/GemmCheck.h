//===- GemmCheck.h - A dense GEMM run in the simulator, checked -*- C++ -*-===//
//
// One dense A4W4 GEMM through the public API on a simulated gfx950 or
// gfx1250 (SimDevice.h): random weights and activations (with the
// adversarial blocks of the numerics checklist), output poisoned with a
// guard row, results against the float64 QDQ reference with a tolerance of
// (K * 2^-24 + 2^-8) * sum_k |a_k w_k| per element (FP32 accumulation, BF16
// output). The workgroups run in a random order; the GEMM runs twice on the
// same weights and must give the same bits. A GEMM against identity weights makes the output the
// dequantized inline-quantized activations, which must equal the CPU
// quantizer's bit for bit (but for the sign of zero, which a sum loses).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_AMDSIM_GEMMCHECK_H
#define MXFP4_AMDSIM_GEMMCHECK_H

#include "mxfp4/AmdSim/Simulator.h"
#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Kernels/KernelSpec.h"

#include <optional>
#include <string>

namespace mxfp4::amdsim {

struct GemmCheckOptions {
  Arch arch = Arch::GFX950;
  int64_t n = 256, k = 512, m = 17;
  ScaleRounding rounding = kDefaultScaleRounding;
  uint64_t seed = 1;
  /// Tile overrides (dispatch decides otherwise).
  std::optional<int64_t> bm, bk, splitK;
};

struct GemmCheckResult {
  std::string kernel;              ///< the kernel the GEMM launched
  int64_t outOfTolerance = 0;      ///< elements beyond the tolerance
  double maxNormalized = 0;        ///< max |got - ref| / sum_k |a_k w_k|
  double relL2 = 0;                ///< vs the QDQ reference, rows after row 0's adversarial blocks
  bool guardIntact = true;         ///< the row after C kept its poison
  bool repeatable = true;          ///< a second launch gave the same bits
  int64_t quantizedColumns = 0;    ///< K columns of the identity check
  int64_t quantizedMismatches = 0; ///< elements differing from the CPU quantizer
  RunStats stats;                  ///< both GEMMs
  std::string firstFailure;        ///< the first element out of tolerance or differing

  bool passed() const {
    return outOfTolerance == 0 && guardIntact && repeatable && quantizedMismatches == 0;
  }
};

/// Runs the check of `options`. An error: the GEMM could not run (a shape
/// the API rejects, or the simulator refusing the kernel).
Expected<GemmCheckResult> checkGemmA4W4(const GemmCheckOptions &options);

} // namespace mxfp4::amdsim

#endif // MXFP4_AMDSIM_GEMMCHECK_H
