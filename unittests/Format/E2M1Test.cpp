//===- E2M1Test.cpp - E2M1 element encoding -------------------------------===//

#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;

namespace {

/// Independent reference: brute-force nearest magnitude, ties to the even code.
uint8_t nearestCode(double x) {
  uint8_t sign = std::signbit(x) ? 0x8 : 0;
  double a = std::fabs(x);
  if (std::isnan(a))
    return sign;
  if (a >= 6.0) // saturation, Inf included (the distances below overflow)
    return sign | 7;
  uint8_t best = 0;
  for (uint8_t c = 1; c < 8; ++c) {
    double dBest = std::fabs(a - kE2M1Magnitudes[best]), d = std::fabs(a - kE2M1Magnitudes[c]);
    if (d < dBest || (d == dBest && c % 2 == 0))
      best = c;
  }
  return sign | best;
}

TEST(E2M1, DecodeTable) {
  const float expected[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(decodeE2M1(uint8_t(c)), expected[c]) << "code " << c;
    EXPECT_EQ(std::signbit(decodeE2M1(uint8_t(c))), c >= 8);
  }
}

TEST(E2M1, EveryCodeRoundTrips) {
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(encodeE2M1(decodeE2M1(uint8_t(c))), c);
}

TEST(E2M1, MidpointsTieToEven) {
  const std::pair<double, float> cases[] = {{0.25, 0.0f}, {0.75, 1.0f}, {1.25, 1.0f},
                                            {1.75, 2.0f}, {2.5, 2.0f},  {3.5, 4.0f},
                                            {5.0, 4.0f},  {5.5, 6.0f},  {6.5, 6.0f}};
  for (auto [x, want] : cases) {
    EXPECT_EQ(decodeE2M1(encodeE2M1(x)), want) << x;
    EXPECT_EQ(decodeE2M1(encodeE2M1(-x)), -want) << -x;
  }
}

TEST(E2M1, SaturatesAndKeepsSignedZero) {
  EXPECT_EQ(encodeE2M1(1e30), 0x7);
  EXPECT_EQ(encodeE2M1(-1e30), 0xF);
  EXPECT_EQ(encodeE2M1(INFINITY), 0x7);
  EXPECT_EQ(encodeE2M1(-INFINITY), 0xF);
  EXPECT_EQ(encodeE2M1(-0.0), 0x8);
  EXPECT_EQ(encodeE2M1(-1e-30), 0x8);
  EXPECT_EQ(encodeE2M1(NAN), 0x0);
  EXPECT_EQ(encodeE2M1(-NAN), 0x8);
}

TEST(E2M1, AllBf16PatternsMatchBruteForce) {
  for (uint32_t b = 0; b < 65536; ++b) {
    double x = bf16ToFloat(uint16_t(b));
    ASSERT_EQ(encodeE2M1(x), nearestCode(x)) << "bf16 0x" << std::hex << b;
  }
}

TEST(E2M1, Packing) {
  EXPECT_EQ(packE2M1(0x3, 0xC), 0xC3);
  const uint8_t row[2] = {0xC3, 0x71};
  EXPECT_EQ(unpackE2M1(row, 0), 0x3);
  EXPECT_EQ(unpackE2M1(row, 1), 0xC);
  EXPECT_EQ(unpackE2M1(row, 2), 0x1);
  EXPECT_EQ(unpackE2M1(row, 3), 0x7);
}

} // namespace
