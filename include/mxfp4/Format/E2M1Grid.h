//===- E2M1Grid.h - MXFP4 quantize-dequantize in bf16 arithmetic -*- C++ -*-===//
//
// The value an element stands for after MXFP4 quantization, decodeE2M1(
// encodeE2M1(x / 2^s)) * 2^s, computed on the bf16 value itself: the grid is
// steps of 2^(max(e, s) - 1) at |x| of exponent e, which adding and
// subtracting C = 2^(max(e, s) + 6) rounds to in bf16 (C's ulp is that step,
// and RNE's ties to even are E2M1's), capped at 6 * 2^s. The sm_90a
// quantizer does this two lanes per instruction (Sm90Quantize.cpp, which
// this mirrors step by step) for every scale whose grid, values and
// constants are normal bf16; other scales take the f32 path.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_E2M1GRID_H
#define MXFP4_FORMAT_E2M1GRID_H

#include <cstdint>

namespace mxfp4 {

/// The E8M0 codes of the bf16 path: steps of 2^(s-1) >= 2^-120, values
/// below 8 * 2^s (every rounding mode's scale exceeds amax / 8) and C up to
/// 2^(s+8) <= 2^123, all normal bf16.
inline constexpr uint32_t kE2M1GridMinCode = 127 - 119;
inline constexpr uint32_t kE2M1GridMaxCode = 127 + 115;

inline constexpr bool onE2M1Grid(uint32_t scaleCode) {
  return scaleCode - kE2M1GridMinCode <= kE2M1GridMaxCode - kE2M1GridMinCode;
}

/// Quantizes and dequantizes the two bf16 lanes of `pair` under scale code
/// `scaleCode` (onE2M1Grid) the way the packed path's instructions do.
uint32_t qdqPairOnE2M1Grid(uint32_t pair, uint32_t scaleCode);

} // namespace mxfp4

#endif // MXFP4_FORMAT_E2M1GRID_H
