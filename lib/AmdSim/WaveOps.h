//===- WaveOps.h - The wave-level AMDGPU instructions, on the CPU -*- C++ -*-===//
//
// Semantics of the instructions a wave executes together, and of the FP4
// conversions, written from AMD's documentation and LLVM's intrinsic
// definitions (sources in docs/AmdSimulator.md), independently of
// Conversion/LaneLayout.h:
//
// - v_mfma_scale_f32_16x16x128_f8f6f4 (gfx950, wave64), FP4 operands:
//   A lane l holds row l%16, K 32*(l/16)..+31; B lane l column l%16, the same
//   K; element k at nibble k%8 of register k/8 (even k low); lane l's scale
//   byte `opsel` is the E8M0 of its 32 K; D register j of lane l is
//   D[4*(l/16)+j][l%16]. 32x32x64: rows/columns l%32, K 32*(l/32)..+31,
//   D register j = D[8*(j/4)+4*(l/32)+(j%4)][l%32].
// - v_wmma_scale_f32_16x16x128_f8f6f4 (gfx1250, wave32), FP4 operands:
//   A lane l, register v, nibble j holds row l%16,
//   K 64*(v/4)+32*(l/16)+8*(v%4)+j (B the same with columns); the scales of
//   row (column) r are in lane r (scale_sel 0) or 16+r (scale_sel 1), byte b
//   for K 32b..32b+31; D register j of lane l is D[8*(l/16)+j][l%16].
// - D = C + sum over K of A * 2^(sA-127) * B * 2^(sB-127), summed exactly
//   in double and rounded once to f32 (the hardware's order of summation
//   is not documented: results may differ from it in the last bits).
// - v_cvt_scalef32_pk_fp4_* / pk8: each input divided by the f32 scale,
//   rounded to nearest even onto E2M1, saturating at 6, sign kept.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_AMDSIM_WAVEOPS_H
#define MXFP4_LIB_AMDSIM_WAVEOPS_H

#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mxfp4::amdsim {

/// E2M1 code of `x` rounded to nearest even, saturated to +-6, sign kept
/// (NaN saturates too: the instruction's NaN result is not documented).
uint8_t roundToE2M1(float x);
float e2m1Value(uint8_t code);

/// The operands of one scaled MMA, per lane: `regsA`/`regsB` 32-bit words
/// of A and B, `accumulators` floats of C, one scale word each.
struct ScaledMmaLanes {
  unsigned lanes = 64;
  unsigned regsA = 4, regsB = 4, accumulators = 4;
  std::vector<uint32_t> a, b; ///< lane-major
  std::vector<float> c;       ///< lane-major
  std::vector<uint32_t> scaleA, scaleB;
  int formatA = 4, formatB = 4;           ///< cbsz/blgp or fmt_a/fmt_b: 4 = E2M1
  int selA = 0, selB = 0;                 ///< MFMA: opsel byte; WMMA: scale_sel lane half
  int scaleFormatA = 0, scaleFormatB = 0; ///< WMMA: 0 = E8M0
};

enum class ScaledMma { Mfma16x16x128, Mfma32x32x64, Wmma16x16x128 };

/// D, lane-major, `accumulators` floats per lane.
Expected<std::vector<float>> scaledMma(ScaledMma kind, const ScaledMmaLanes &in);

/// The source lane ds_swizzle(offset) reads for `lane` (bit-mask mode within
/// 32-lane groups, quad-perm mode within 4); an error for the rotate and
/// FFT modes, which are not modelled.
Expected<unsigned> swizzleSource(unsigned lane, uint32_t offset);

} // namespace mxfp4::amdsim

#endif // MXFP4_LIB_AMDSIM_WAVEOPS_H
