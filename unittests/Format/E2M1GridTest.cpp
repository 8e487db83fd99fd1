//===- E2M1GridTest.cpp - Quantize-dequantize in bf16 arithmetic ----------===//
//
// The packed path of the sm_90a quantizer (E2M1Grid.h) against the exact
// definition, decodeE2M1(encodeE2M1(x / 2^s)) * 2^s, for every bf16 value a
// block with scale code s can hold, at every scale code of the path.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/E2M1Grid.h"
#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;

namespace {

uint16_t exactQdq(uint16_t x, uint32_t code) {
  const double scale = std::ldexp(1.0, int(code) - 127);
  return floatToBf16(float(decodeE2M1(encodeE2M1(double(bf16ToFloat(x)) / scale)) * scale));
}

TEST(E2M1Grid, EveryValueAtEveryScaleOfThePath) {
  int64_t checked = 0, mismatches = 0;
  for (uint32_t code = kE2M1GridMinCode; code <= kE2M1GridMaxCode; ++code)
    for (uint32_t x = 0; x < 0x10000; ++x) {
      // |v| < 8 * 2^s: any element of a block with this scale.
      auto inBlock = [&](uint32_t v) { return (v & 0x7F80) >> 7 <= code + 2; };
      if (!inBlock(x))
        continue;
      // Lane 1 holds x, lane 0 another value: the lanes must not mix.
      const uint32_t other = (x * 40503u) & 0xFFFF, y = inBlock(other) ? other : 0;
      const uint32_t got = qdqPairOnE2M1Grid(y | x << 16, code);
      const uint32_t want =
          exactQdq(uint16_t(y), code) | uint32_t(exactQdq(uint16_t(x), code)) << 16;
      ++checked;
      if (got != want && ++mismatches <= 5)
        ADD_FAILURE() << "code " << code << " x 0x" << std::hex << x << " y 0x" << y << ": got 0x"
                      << got << " want 0x" << want;
    }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(checked, 235 * 30000);
}

TEST(E2M1Grid, PathCoversTheScalesOfRealActivations) {
  // Blocks whose largest |x| lies in [2^-100, 2^100] take it in every mode.
  for (ScaleRounding mode : allScaleRoundings())
    for (int e = -100; e <= 100; ++e)
      for (uint32_t mant : {0u, 0x400000u, 0x7FFFFFu}) {
        const uint32_t amax = uint32_t(e + 127) << 23 | mant;
        EXPECT_TRUE(onE2M1Grid(scaleFromAmax(amax, mode))) << toString(mode) << " 2^" << e;
      }
  EXPECT_FALSE(onE2M1Grid(0));
  EXPECT_FALSE(onE2M1Grid(0xFF));
  EXPECT_FALSE(onE2M1Grid(kE2M1GridMinCode - 1));
  EXPECT_FALSE(onE2M1Grid(kE2M1GridMaxCode + 1));
}

} // namespace
