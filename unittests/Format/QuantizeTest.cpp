//===- QuantizeTest.cpp - Whole-matrix quantization -----------------------===//

#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Support/BF16.h"
#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;

namespace {

TEST(Quantize, HandDerivedBlock) {
  // amax 1.7 -> RoundUp scale 2^-1: elements are x * 2 rounded on the grid.
  float x[32] = {1.7f, 0.3f, -0.9f, 0.124f, -1.7f, 0.0f, -0.0f, 1.25f};
  uint8_t packed[16];
  EXPECT_EQ(quantizeBlock(x, ScaleRounding::RoundUp, packed), 126);
  // 3.4->3 (0x5), 0.6->0.5 (0x1), -1.8->-2 (0xC), 0.248->0 (0x0),
  // -3.4->-3 (0xD), 0 (0x0), -0 (0x8), 2.5->2 (0x4)
  EXPECT_EQ(packed[0], 0x15);
  EXPECT_EQ(packed[1], 0x0C);
  EXPECT_EQ(packed[2], 0x0D);
  EXPECT_EQ(packed[3], 0x48);
  for (int i = 4; i < 16; ++i)
    EXPECT_EQ(packed[i], 0x00);
  // Under Even the scale is 2^-2: 1.7*4 = 6.8 saturates to 6.
  EXPECT_EQ(quantizeBlock(x, ScaleRounding::Even, packed), 125);
  EXPECT_EQ(packed[0] & 0xF, 0x7);
}

TEST(Quantize, AllZeroBlock) {
  float x[32] = {};
  uint8_t packed[16];
  for (ScaleRounding m : allScaleRoundings()) {
    EXPECT_EQ(quantizeBlock(x, m, packed), 0);
    for (uint8_t b : packed)
      EXPECT_EQ(b, 0);
  }
}

TEST(Quantize, InfAndNaNBlocks) {
  float x[32] = {INFINITY, 1.0f, -2.0f};
  uint8_t packed[16];
  // RoundUp: NaN scale, zero elements (the block decodes to NaN).
  EXPECT_EQ(quantizeBlock(x, ScaleRounding::RoundUp, packed), kE8M0NaN);
  EXPECT_EQ(packed[0], 0);
  // Even: scale 2^127, Inf saturates to 6, the rest flush to zero.
  EXPECT_EQ(quantizeBlock(x, ScaleRounding::Even, packed), 254);
  EXPECT_EQ(packed[0], 0x07);
  EXPECT_EQ(packed[1], 0x08);
  float n[32] = {1.0f, NAN};
  EXPECT_EQ(quantizeBlock(n, ScaleRounding::Floor, packed), kE8M0NaN);
}

TEST(Quantize, SubnormalInputs) {
  float x[32];
  for (int i = 0; i < 32; ++i)
    x[i] = std::ldexp(float(i % 7), -140) * (i % 2 ? -1.0f : 1.0f);
  uint8_t packed[16];
  for (ScaleRounding m : allScaleRoundings()) {
    uint8_t s = quantizeBlock(x, m, packed);
    double scale = decodeE8M0(s);
    for (int i = 0; i < 32; ++i) {
      double got = decodeE2M1(unpackE2M1(packed, i)) * scale;
      // The result is the grid point nearest x / scale, so within half a step
      // of the coarsest spacing (2) times the scale, or saturated.
      EXPECT_LE(std::fabs(got - x[i]), scale + 1e-300) << std::string(toString(m)) << " i=" << i;
    }
  }
}

TEST(Quantize, MatrixMatchesBlocksForBf16AndF32) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t rows = 37, k = 224;
  std::vector<uint16_t> x = test::randomBf16(rng, size_t(rows * k), 3.0f);
  std::vector<float> xf(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    xf[i] = bf16ToFloat(x[i]);
  for (ScaleRounding m : allScaleRoundings()) {
    Expected<MxMatrix> a = quantizeBf16(x, rows, k, m);
    Expected<MxMatrix> b = quantizeF32(xf, rows, k, m);
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_EQ(a->data, b->data);
    EXPECT_EQ(a->scales, b->scales);
    for (int64_t blk = 0; blk < rows * k / 32; ++blk) {
      uint8_t packed[16];
      ASSERT_EQ(quantizeBlock(&xf[size_t(blk * 32)], m, packed), a->scales[size_t(blk)]);
      ASSERT_EQ(0, std::memcmp(packed, &a->data[size_t(blk * 16)], 16));
    }
  }
}

TEST(Quantize, DequantizeRoundTripsRepresentableValues) {
  // Values already on the MXFP4 grid survive quantize -> dequantize exactly.
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t rows = 8, k = 64;
  std::vector<float> x(size_t(rows * k));
  std::uniform_int_distribution<int> codeDist(0, 15);
  for (int64_t blk = 0; blk < rows * k / 32; ++blk) {
    int e = int(rng() % 20) - 10;
    for (int i = 0; i < 32; ++i)
      x[size_t(blk * 32 + i)] = std::ldexp(decodeE2M1(uint8_t(codeDist(rng))), e);
    x[size_t(blk * 32)] = std::ldexp(6.0f, e); // pin amax so RoundUp picks 2^e
  }
  Expected<MxMatrix> q = quantizeF32(x, rows, k, ScaleRounding::RoundUp);
  ASSERT_OK(q);
  std::vector<double> back = dequantize(*q);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(back[i], double(x[i])) << i;
}

TEST(Quantize, ErrorsNameTheConstraint) {
  std::vector<uint16_t> x(100);
  EXPECT_ERROR_CONTAINS(quantizeBf16(x, 2, 50), "K = 50 is not a multiple of 32");
  EXPECT_ERROR_CONTAINS(quantizeBf16(x, 3, 32), "needs 96 elements but the input holds 100");
  EXPECT_ERROR_CONTAINS(quantizeBf16(x, -1, 32), "is invalid");
  EXPECT_ERROR_CONTAINS(quantizeBf16(x, 1, 0), "is invalid");
}

TEST(Quantize, EmptyMatrixIsFine) {
  Expected<MxMatrix> q = quantizeBf16({}, 0, 64);
  ASSERT_OK(q);
  EXPECT_TRUE(q->data.empty());
}

} // namespace
