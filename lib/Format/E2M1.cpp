//===- E2M1.cpp - The FP4 element format of MXFP4 -------------------------===//
//
// Round-to-nearest-even on the E2M1 grid. The thresholds are the midpoints of
// neighbouring magnitudes; at a midpoint the even code (mantissa bit 0 clear)
// wins, which is what AITER's Triton quantizer and the gfx950/gfx1250 cvt
// instructions do (semantics.md 2.2, 4.4).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/E2M1.h"

#include <cmath>

namespace mxfp4 {

uint8_t encodeE2M1(double x) {
  uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  double a = std::fabs(x);
  if (std::isnan(a))
    return sign;
  uint8_t mag;
  if (a <= 0.25)
    mag = 0; // 0.25 ties to 0
  else if (a < 0.75)
    mag = 1;
  else if (a <= 1.25)
    mag = 2; // 0.75 and 1.25 tie to 1.0
  else if (a < 1.75)
    mag = 3;
  else if (a <= 2.5)
    mag = 4; // 1.75 and 2.5 tie to 2.0
  else if (a < 3.5)
    mag = 5;
  else if (a <= 5.0)
    mag = 6; // 3.5 and 5.0 tie to 4.0
  else
    mag = 7; // saturate, Inf included
  return sign | mag;
}

} // namespace mxfp4
