//===- BF16.h - bfloat16 bit patterns on the host ---------------*- C++ -*-===//
//
// BF16 values travel as raw uint16_t bit patterns (what a device buffer holds).
// Widening to f32 is exact; narrowing rounds to nearest even and keeps NaN a NaN.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_BF16_H
#define MXFP4_SUPPORT_BF16_H

#include <cstdint>
#include <cstring>

namespace mxfp4 {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// Exact widening of a bf16 bit pattern.
inline float bf16ToFloat(uint16_t b) { return bitsToFloat(uint32_t(b) << 16); }

/// Round-to-nearest-even narrowing; NaN stays a (quiet) NaN with its sign.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return uint16_t((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

} // namespace mxfp4

#endif // MXFP4_SUPPORT_BF16_H
