//===- ScaleRoundingTest.cpp - E8M0 scales under the four modes -----------===//
//
// Known answers derived by hand from each mode's rule (semantics.md 2), and
// the corner cases docs/Numerics.md defines.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>

using namespace mxfp4;

namespace {

uint8_t code(float amax, ScaleRounding mode) { return scaleFromAmax(floatBits(amax), mode); }

struct Known {
  float amax;
  uint8_t roundUp, even, floor, nearest;
};

TEST(ScaleRounding, KnownAnswers) {
  const Known known[] = {
      // amax 1.7: ceil_pow2(1.7/6)=2^-1; Even/Floor: 2^0/4 = 2^-2; Nearest: 1.7>=1.5 -> 2/4.
      {1.7f, 126, 125, 125, 126},
      // 6 * 2^k is exactly 2^k under RoundUp; Nearest rounds 1.5 up.
      {6.0f, 127, 127, 127, 128},
      {1.0f, 125, 125, 125, 125},
      {1.5f, 125, 125, 125, 126},
      // Even rounds significands >= 1.75 up; Floor never does.
      {1.75f, 126, 126, 125, 126},
      {4.0f, 127, 127, 127, 127},
      {6.5f, 128, 127, 127, 128},
      {448.0f, 134, 134, 133, 134},
      // Smallest normal: every rule bottoms out at code 0 except RoundUp's ceil.
      {FLT_MIN, 1, 0, 0, 0},
      // Largest finite: RoundUp tops out at 253, Even rounds to Inf and clamps to 254.
      {FLT_MAX, 253, 254, 252, 253},
  };
  for (const Known &k : known) {
    SCOPED_TRACE(k.amax);
    EXPECT_EQ(code(k.amax, ScaleRounding::RoundUp), k.roundUp);
    EXPECT_EQ(code(k.amax, ScaleRounding::Even), k.even);
    EXPECT_EQ(code(k.amax, ScaleRounding::Floor), k.floor);
    EXPECT_EQ(code(k.amax, ScaleRounding::Nearest), k.nearest);
  }
}

TEST(ScaleRounding, ZeroBlockGivesCodeZero) {
  for (ScaleRounding m : allScaleRoundings())
    EXPECT_EQ(code(0.0f, m), 0) << std::string(toString(m));
}

TEST(ScaleRounding, SubnormalAmax) {
  float tiny = std::ldexp(1.0f, -140);
  EXPECT_EQ(code(tiny, ScaleRounding::RoundUp), 1); // ceil of a nonzero subnormal
  EXPECT_EQ(code(tiny, ScaleRounding::Even), 0);
  EXPECT_EQ(code(tiny, ScaleRounding::Floor), 0);
  EXPECT_EQ(code(tiny, ScaleRounding::Nearest), 0);
  // Floor uses the true log2 of a subnormal: 2^-126 * (1 - 2^-23) is below
  // 2^-126, so e = -127 - 2, clamped to code 0.
  EXPECT_EQ(code(std::nextafter(FLT_MIN, 0.0f), ScaleRounding::Floor), 0);
}

TEST(ScaleRounding, InfAndNaN) {
  EXPECT_EQ(code(INFINITY, ScaleRounding::RoundUp), kE8M0NaN);
  EXPECT_EQ(code(INFINITY, ScaleRounding::Floor), kE8M0NaN);
  EXPECT_EQ(code(INFINITY, ScaleRounding::Even), 254);
  EXPECT_EQ(code(INFINITY, ScaleRounding::Nearest), 253);
  EXPECT_EQ(code(NAN, ScaleRounding::RoundUp), kE8M0NaN);
  EXPECT_EQ(code(NAN, ScaleRounding::Floor), kE8M0NaN);
  EXPECT_EQ(code(NAN, ScaleRounding::Even), 254);
  // Nearest's half-step add carries a quiet NaN into the sign bit: code 0.
  EXPECT_EQ(code(NAN, ScaleRounding::Nearest), 0);
}

TEST(ScaleRounding, AmaxThatWouldRoundPast254) {
  // Even: 1.75 * 2^127 rounds to Inf (e = 128) and is clamped to 254.
  float big = std::ldexp(1.75f, 127);
  EXPECT_EQ(code(big, ScaleRounding::Even), 254);
  EXPECT_EQ(code(std::nextafter(big, 0.0f), ScaleRounding::Even), 252);
  // Every finite amax stays below the NaN code in every mode.
  for (ScaleRounding m : allScaleRoundings())
    for (uint32_t bits = 0x7F000000u; bits < 0x7F800000u; bits += 0x1357u)
      EXPECT_LT(scaleFromAmax(bits, m), kE8M0NaN) << std::string(toString(m));
}

TEST(ScaleRounding, SignBitIsIgnored) {
  for (ScaleRounding m : allScaleRoundings())
    EXPECT_EQ(scaleFromAmax(floatBits(-3.0f), m), code(3.0f, m));
}

TEST(ScaleRounding, RoundUpNeverClipsFloorMaySaturate) {
  // Over all positive finite bf16 magnitudes: under RoundUp amax / scale <= 6
  // (no element saturates); under Floor it stays below 8.
  for (uint32_t b = 1; b < 0x7F80; ++b) {
    float amax = bf16ToFloat(uint16_t(b));
    double up = amax / decodeE8M0(code(amax, ScaleRounding::RoundUp));
    double fl = amax / decodeE8M0(code(amax, ScaleRounding::Floor));
    ASSERT_LE(up, 6.0) << amax;
    if (amax >= std::ldexp(1.0, -124)) { // above the code-0 clamp
      ASSERT_LT(fl, 8.0) << amax;
    }
  }
}

TEST(E8M0, Decode) {
  EXPECT_EQ(decodeE8M0(127), 1.0);
  EXPECT_EQ(decodeE8M0(0), std::ldexp(1.0, -127));
  EXPECT_EQ(decodeE8M0(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(decodeE8M0(kE8M0NaN)));
}

TEST(ScaleRounding, NamesRoundTrip) {
  for (ScaleRounding m : allScaleRoundings())
    EXPECT_EQ(parseScaleRounding(toString(m)), m);
  EXPECT_EQ(parseScaleRounding("RoundUp"), ScaleRounding::RoundUp);
  EXPECT_EQ(parseScaleRounding("ceil"), std::nullopt);
}

} // namespace
