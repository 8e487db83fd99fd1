//===- E2M1.h - The FP4 element format of MXFP4 -----------------*- C++ -*-===//
//
// E2M1: sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0; no Inf/NaN.
// Magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6. Two codes per byte, the element with
// the even index in the low nibble (docs/Numerics.md).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_E2M1_H
#define MXFP4_FORMAT_E2M1_H

#include <cstdint>

namespace mxfp4 {

/// Largest finite E2M1 magnitude; everything at or above it encodes as 6.
inline constexpr double kE2M1Max = 6.0;

/// Magnitude of each 3-bit E2M1 code.
inline constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/// Encodes `x` (already divided by its block scale) to a 4-bit code: round to
/// nearest, ties to the even code, saturating to +-6 (Inf too), sign kept
/// (-0.0 gives 0x8). NaN encodes as a zero with NaN's sign bit.
uint8_t encodeE2M1(double x);

/// Decodes the low 4 bits of `code`.
inline float decodeE2M1(uint8_t code) {
  float m = kE2M1Magnitudes[code & 0x7];
  return (code & 0x8) ? -m : m;
}

/// Packs two codes into a byte: `even` in the low nibble, `odd` in the high.
inline uint8_t packE2M1(uint8_t even, uint8_t odd) {
  return uint8_t((even & 0xF) | ((odd & 0xF) << 4));
}

/// The code of element `k` (0-based) in a packed row.
inline uint8_t unpackE2M1(const uint8_t *packedRow, int64_t k) {
  uint8_t byte = packedRow[k >> 1];
  return (k & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 0xF);
}

} // namespace mxfp4

#endif // MXFP4_FORMAT_E2M1_H
