//===- E2M1Grid.cpp - MXFP4 quantize-dequantize in bf16 arithmetic --------===//
//
// One function per PTX instruction of the packed path (Sm90Quantize.cpp),
// on both 16-bit lanes.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/E2M1Grid.h"
#include "mxfp4/Support/BF16.h"

#include <cmath>

namespace mxfp4 {

namespace {
/// RNE of a positive finite double to bf16 normal precision (8 bits).
uint16_t roundToBf16(double d) {
  if (d == 0)
    return 0;
  int e;
  std::frexp(d, &e); // d = f * 2^e, f in [0.5, 1)
  double r = std::ldexp(std::nearbyint(std::ldexp(d, 8 - e)), e - 8);
  return floatToBf16(float(r)); // exact: r has 8 significant bits
}

double value(uint16_t h) { return double(bf16ToFloat(h)); }

uint16_t maxBf16(uint16_t a, uint16_t b) { return value(a) >= value(b) ? a : b; }
uint16_t minBf16(uint16_t a, uint16_t b) { return value(a) <= value(b) ? a : b; }
uint16_t addBf16(uint16_t a, uint16_t b) { return roundToBf16(value(a) + value(b)); }
uint16_t subBf16(uint16_t a, uint16_t b) { return roundToBf16(value(a) - value(b)); }

uint16_t qdqLane(uint16_t x, uint16_t scale, uint16_t cap) {
  uint16_t a = x & 0x7FFF;                           // and.b32 a, x, 0x7FFF7FFF
  uint16_t c = maxBf16(x & 0x7F80, scale);           // and.b32, max.bf16x2
  c = uint16_t(c + 0x0300);                          // add.u32 0x03000300: C = 2^(.. + 6)
  uint16_t q = subBf16(addBf16(a, c), c);            // add.rn.bf16x2, sub.rn.bf16x2
  return uint16_t(minBf16(q, cap) | (x & 0x8000));   // min.bf16x2, and, or
}
} // namespace

uint32_t qdqPairOnE2M1Grid(uint32_t pair, uint32_t scaleCode) {
  // 2^s as bf16 is the code in the exponent field; 6 * 2^s = 1.5 * 2^(s+2).
  const uint16_t scale = uint16_t(scaleCode << 7);
  const uint16_t cap = uint16_t(((scaleCode + 2) << 7) | 0x40);
  return qdqLane(uint16_t(pair), scale, cap) |
         uint32_t(qdqLane(uint16_t(pair >> 16), scale, cap)) << 16;
}

} // namespace mxfp4
