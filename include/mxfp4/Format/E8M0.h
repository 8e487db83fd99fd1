//===- E8M0.h - MXFP4 block scales and the scale-rounding modes -*- C++ -*-===//
//
// E8M0 is an unsigned biased exponent: value 2^(code-127), code 0xFF is NaN.
// One scale covers kBlockSize consecutive K-elements. Which power of two a
// block gets is a named choice (semantics.md section 2, docs/Numerics.md):
//
//   RoundUp  ceil_pow2(amax * fl(1/6))       AITER HIP default, FlyDSL inline quant
//   Even     amax rounded at 1 mantissa bit   AITER Triton dynamic_mxfp4_quant
//   Floor    floor_pow2(amax) / 4             OCP MX v1.0, microxcaling
//   Nearest  round_pow2(amax, 1.5) / 4        legacy AITER, FlyDSL fused stage-1
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_E8M0_H
#define MXFP4_FORMAT_E8M0_H

#include "mxfp4/Support/Span.h"
#include <string_view>

#include <cstdint>
#include <optional>

namespace mxfp4 {

/// K-elements sharing one E8M0 scale.
inline constexpr int64_t kBlockSize = 32;

/// The E8M0 NaN code.
inline constexpr uint8_t kE8M0NaN = 0xFF;

/// How a block's E8M0 scale is derived from its largest magnitude.
enum class ScaleRounding : uint8_t { RoundUp, Even, Floor, Nearest };

inline constexpr ScaleRounding kDefaultScaleRounding = ScaleRounding::RoundUp;

/// All modes, in enum order.
Span<ScaleRounding> allScaleRoundings();

/// "roundup", "even", "floor", "nearest".
std::string_view toString(ScaleRounding mode);

/// Parses the names toString() returns (case-insensitive).
std::optional<ScaleRounding> parseScaleRounding(std::string_view name);

/// The E8M0 code for a block whose largest magnitude has the f32 bit pattern
/// `amaxBits` (sign bit clear; NaN patterns sort above Inf, so the integer
/// maximum of |x| bit patterns is the right input). Bit-exact per mode; the
/// Inf/NaN behaviour of each mode is in docs/Numerics.md.
uint8_t scaleFromAmax(uint32_t amaxBits, ScaleRounding mode);

/// 2^(code-127) as a double (exact for all codes); NaN for 0xFF.
double decodeE8M0(uint8_t code);

} // namespace mxfp4

#endif // MXFP4_FORMAT_E8M0_H
