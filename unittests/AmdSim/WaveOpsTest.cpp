//===- WaveOpsTest.cpp - The simulator's wave-level instructions ----------===//
//
// Pins the documented operand layouts (lib/AmdSim/WaveOps.h) with one-hot
// operands: each test places one product where the ISA says an element
// lives and expects it at the documented D position, and nowhere else.
//
//===----------------------------------------------------------------------===//

#include "../../lib/AmdSim/WaveOps.h"

#include "TestUtil/Expected.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;
using namespace mxfp4::amdsim;

namespace {

TEST(AmdSimWaveOps, E2M1RoundsToNearestEvenAndSaturates) {
  const struct {
    float x;
    uint8_t code;
  } cases[] = {{0.0f, 0},  {0.25f, 0}, {0.26f, 1},  {0.75f, 2},  {1.25f, 2},  {1.75f, 4},
               {2.5f, 4},  {3.5f, 6},  {5.0f, 6},   {5.01f, 7},  {6.0f, 7},   {1e30f, 7},
               {-0.1f, 8}, {-0.3f, 9}, {-2.5f, 12}, {-7.0f, 15}, {-0.25f, 8}, {2.99f, 5}};
  for (const auto &c : cases)
    EXPECT_EQ(roundToE2M1(c.x), c.code) << "x = " << c.x;
  for (uint8_t code = 0; code < 16; ++code)
    EXPECT_EQ(roundToE2M1(e2m1Value(code)), code == 8 ? 8 : code);
}

TEST(AmdSimWaveOps, SwizzleModes) {
  // Bit-mask mode: and 0x1F, xor 1 swaps neighbours within 32 lanes.
  const uint32_t xor1 = 0x1F | (1u << 10);
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(*swizzleSource(lane, xor1), lane ^ 1);
  // or 3, and 0: every lane of a 32-group reads lane 3 of it.
  EXPECT_EQ(*swizzleSource(40, 3u << 5), 35u);
  // Quad-perm mode: [3, 2, 1, 0] reverses each quad.
  const uint32_t reverse = 0x8000 | 3 | (2 << 2) | (1 << 4);
  EXPECT_EQ(*swizzleSource(4, reverse), 7u);
  EXPECT_EQ(*swizzleSource(6, reverse), 5u);
  EXPECT_ERROR_CONTAINS(swizzleSource(0, 0xC000), "not modelled");
}

/// One-hot MFMA/WMMA inputs: every element E2M1 0 and every scale 2^0.
ScaledMmaLanes zeros(ScaledMma kind) {
  ScaledMmaLanes in;
  const bool wmma = kind == ScaledMma::Wmma16x16x128;
  in.lanes = wmma ? 32 : 64;
  in.regsA = in.regsB = wmma ? 8 : 4;
  in.accumulators = kind == ScaledMma::Mfma32x32x64 ? 16 : wmma ? 8 : 4;
  in.a.assign(in.lanes * in.regsA, 0);
  in.b.assign(in.lanes * in.regsB, 0);
  in.c.assign(in.lanes * in.accumulators, 0.0f);
  in.scaleA.assign(in.lanes, 0x7F7F7F7F);
  in.scaleB.assign(in.lanes, 0x7F7F7F7F);
  return in;
}

void setNibble(std::vector<uint32_t> &regs, unsigned regsPerLane, unsigned lane, unsigned reg,
               unsigned index, uint8_t code) {
  regs[lane * regsPerLane + reg] |= uint32_t(code) << (4 * index);
}

/// The single non-zero of D (lane, register) and its value.
void expectOnly(const std::vector<float> &d, unsigned accumulators, unsigned lane, unsigned reg,
                float value) {
  for (size_t i = 0; i < d.size(); ++i) {
    const bool target = i == size_t(lane) * accumulators + reg;
    EXPECT_EQ(d[i], target ? value : 0.0f)
        << "lane " << i / accumulators << " reg " << i % accumulators;
  }
}

TEST(AmdSimWaveOps, Mfma16x16x128Layout) {
  // A[3][70] = 1.0, B[70][5] = 1.5; A's scale for row 3, K block 2 is 2^1
  // in byte 1 (opsel 1). A: lane 3 + 16 * 2, register (70 % 32) / 8 = 0,
  // nibble 70 % 8 = 6. D[3][5]: lane 5 + 16 * (3 / 4) = 5, register 3.
  ScaledMmaLanes in = zeros(ScaledMma::Mfma16x16x128);
  setNibble(in.a, 4, 35, 0, 6, 0x2);
  setNibble(in.b, 4, 37, 0, 6, 0x3);
  in.selA = 1;
  in.scaleA[35] = 0x7F7F807F;
  Expected<std::vector<float>> d = scaledMma(ScaledMma::Mfma16x16x128, in);
  ASSERT_OK(d);
  expectOnly(*d, 4, 5, 3, 3.0f);
}

TEST(AmdSimWaveOps, Mfma32x32x64Layout) {
  // A[20][40] = -2, B[40][9] = 0.5: lanes 20 + 32 and 9 + 32, register 1,
  // nibble 0. D[20][9]: 20 = 8 * 2 + 4 * 1 + 0, so lane 9 + 32, register 8.
  ScaledMmaLanes in = zeros(ScaledMma::Mfma32x32x64);
  setNibble(in.a, 4, 52, 1, 0, 0xC);
  setNibble(in.b, 4, 41, 1, 0, 0x1);
  Expected<std::vector<float>> d = scaledMma(ScaledMma::Mfma32x32x64, in);
  ASSERT_OK(d);
  expectOnly(*d, 16, 41, 8, -1.0f);
}

TEST(AmdSimWaveOps, Wmma16x16x128Layout) {
  // A[12][100] = 3, B[100][2] = 4: K 100 = 64 * 1 + 32 * 1 + 8 * 0 + 4, so
  // lanes 12 + 16 and 2 + 16, register 4, nibble 4. The scales of row 12
  // are in lane 12 (scale_sel 0), byte 100 / 32 = 3; B's in lane 16 + 2
  // (scale_sel 1). D[12][2]: lane 2 + 16, register 12 - 8 = 4.
  ScaledMmaLanes in = zeros(ScaledMma::Wmma16x16x128);
  setNibble(in.a, 8, 28, 4, 4, 0x5);
  setNibble(in.b, 8, 18, 4, 4, 0x6);
  in.scaleA[12] = 0x7E7F7F7F; // 2^-1 for K block 3
  in.selB = 1;
  in.scaleB[18] = 0x817F7F7F; // 2^2 for K block 3
  in.scaleB[2] = 0;           // lanes 0-15 are not read with scale_sel 1
  Expected<std::vector<float>> d = scaledMma(ScaledMma::Wmma16x16x128, in);
  ASSERT_OK(d);
  expectOnly(*d, 8, 18, 4, 3.0f * 0.5f * 4.0f * 4.0f);
}

TEST(AmdSimWaveOps, NaNScaleAndUnmodelledFormats) {
  ScaledMmaLanes in = zeros(ScaledMma::Mfma16x16x128);
  in.scaleA[0] = 0xFF;
  Expected<std::vector<float>> d = scaledMma(ScaledMma::Mfma16x16x128, in);
  ASSERT_OK(d);
  EXPECT_TRUE(std::isnan((*d)[0])); // row 0 reads the NaN scale
  in.formatA = 0;                   // E4M3
  EXPECT_ERROR_CONTAINS(scaledMma(ScaledMma::Mfma16x16x128, in), "not modelled");
}

} // namespace
