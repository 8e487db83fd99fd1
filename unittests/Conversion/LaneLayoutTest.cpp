//===- LaneLayoutTest.cpp - Lane layouts of the scaled MMA instructions ----===//
//
// The lane tables of semantics.md 4.1/4.2, and their agreement with the
// preshuffled weight and scale layouts the lowerings read lane by lane.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/LaneLayout.h"
#include "mxfp4/Format/Layout.h"

#include "gtest/gtest.h"

#include <set>

using namespace mxfp4;

namespace {

const MmaIntrinsic kAll[] = {MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32,
                             MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32};

TEST(LaneLayout, OperandsCoverTheTileOnce) {
  for (MmaIntrinsic i : kAll) {
    const MmaShape &s = mmaShape(i);
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < s.waveSize; ++lane)
      for (int e = 0; e < s.fp4PerLane; ++e) {
        RowK rk = operandElement(i, lane, e);
        ASSERT_GE(rk.row, 0);
        ASSERT_LT(rk.row, s.m);
        ASSERT_GE(rk.k, 0);
        ASSERT_LT(rk.k, s.k);
        ASSERT_TRUE(seen.insert({rk.row, rk.k}).second) << s.mnemonic << " lane " << lane;
      }
    EXPECT_EQ(int(seen.size()), s.m * s.k);
  }
}

TEST(LaneLayout, AccumulatorsCoverTheTileOnce) {
  for (MmaIntrinsic i : kAll) {
    const MmaShape &s = mmaShape(i);
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < s.waveSize; ++lane)
      for (int r = 0; r < s.accPerLane; ++r) {
        RowCol rc = accumulatorElement(i, lane, r);
        ASSERT_TRUE(seen.insert({rc.row, rc.col}).second);
        ASSERT_LT(rc.row, s.m);
        ASSERT_LT(rc.col, s.n);
      }
    EXPECT_EQ(int(seen.size()), s.m * s.n);
  }
}

TEST(LaneLayout, Gfx950TableRows) {
  // semantics.md 4.1, 16x16x128: A lane l = row l%16, K 32*(l/16)..+31;
  // C reg j = C[4*(l/16)+j][l%16].
  auto mfma = MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32;
  EXPECT_EQ(operandElement(mfma, 0, 0), (RowK{0, 0}));
  EXPECT_EQ(operandElement(mfma, 17, 0), (RowK{1, 32}));
  EXPECT_EQ(operandElement(mfma, 63, 31), (RowK{15, 127}));
  EXPECT_EQ(accumulatorElement(mfma, 35, 2), (RowCol{10, 3}));
  EXPECT_EQ(scaleOfLane(mfma, 47, 0), (RowK{15, 2}));
  EXPECT_EQ(mmaShape(mfma).waveSize, 64);
}

TEST(LaneLayout, Gfx1250TableRows) {
  // Lanes 16-31 hold the second 32-element chunk of each 64-element half.
  auto wmma = MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32;
  EXPECT_EQ(operandElement(wmma, 5, 0), (RowK{5, 0}));
  EXPECT_EQ(operandElement(wmma, 5, 32), (RowK{5, 64}));
  EXPECT_EQ(operandElement(wmma, 21, 0), (RowK{5, 32}));
  EXPECT_EQ(operandElement(wmma, 21, 63), (RowK{5, 127}));
  EXPECT_EQ(accumulatorElement(wmma, 20, 7), (RowCol{15, 4}));
  EXPECT_EQ(scaleOfLane(wmma, 3, 2), (RowK{3, 2}));
  EXPECT_EQ(mmaShape(wmma).waveSize, 32);
}

/// Where lane `lane`'s element `e` sits in the preshuffled weights, the way
/// the lowering reads it: gfx950 one 16-byte load at chunk + 16 * lane;
/// gfx1250 two loads at chunk + 256 * (lane/16) + 16 * (lane%16) and +512.
int64_t loweringByte(MmaIntrinsic i, int64_t chunk, int lane, int e) {
  if (i == MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32)
    return chunk + 16 * lane + e / 2;
  int64_t base = chunk + 256 * (lane / 16) + 16 * (lane % 16);
  return base + (e < 32 ? 0 : 512) + (e % 32) / 2;
}

TEST(LaneLayout, PreshuffledWeightsFeedEachLaneItsOperand) {
  const int64_t n = 32, k = 512, kBytes = k / 2;
  for (MmaIntrinsic i : kAll) {
    const MmaShape &s = mmaShape(i);
    for (int64_t group = 0; group < n / 16; ++group)
      for (int64_t step = 0; step < k / 128; ++step) {
        int64_t chunk = group * 16 * kBytes + step * 1024;
        for (int lane = 0; lane < s.waveSize; ++lane)
          for (int e = 0; e < s.fp4PerLane; ++e) {
            RowK rk = operandElement(i, lane, e);
            int64_t kk = step * 128 + rk.k;
            ASSERT_EQ(weightOffset(WeightLayout::Gfx950Mfma16, kBytes, group * 16 + rk.row, kk / 2),
                      loweringByte(i, chunk, lane, e))
                << s.mnemonic << " lane " << lane << " e " << e;
            // Element parity picks the nibble: even K in the low nibble.
            ASSERT_EQ(kk % 2, e % 2);
          }
      }
  }
}

TEST(LaneLayout, Gfx950ScaleDwordsMatchOpsel) {
  // The lowering loads the dword at (kblock/8)*256 + 4*lane of a 32-row group
  // and picks byte opsel = 2*Kstep + row/16.
  const int64_t rows = 64, kBlocks = 16;
  StorageShape st = scaleStorageShape(ScaleLayout::Gfx950Mfma16, rows, kBlocks);
  auto mfma = MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32;
  for (int64_t group = 0; group < rows / 32; ++group)
    for (int64_t kb8 = 0; kb8 < kBlocks / 8; ++kb8)
      for (int lane = 0; lane < 64; ++lane)
        for (int opsel = 0; opsel < 4; ++opsel) {
          RowK base = scaleOfLane(mfma, lane, 0);
          int64_t row = group * 32 + 16 * (opsel % 2) + base.row;
          int64_t kblock = kb8 * 8 + 4 * (opsel / 2) + base.k;
          ASSERT_EQ(gfx950ScaleOpsel(int(row % 32), opsel / 2), opsel);
          ASSERT_EQ(scaleOffset(ScaleLayout::Gfx950Mfma16, st, row, kblock),
                    group * 32 * st.cols + kb8 * 256 + 4 * lane + opsel);
        }
}

TEST(LaneLayout, Gfx1250ScaleDwordsHoldARowsFourBlocks) {
  // The lowering loads the dword at (n/32)*32*cols + kstep*128 + 4*(n%32).
  const int64_t rows = 64, kBlocks = 12;
  StorageShape st = scaleStorageShape(ScaleLayout::Gfx1250Wmma, rows, kBlocks);
  auto wmma = MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t kstep = 0; kstep < kBlocks / 4; ++kstep)
      for (int byte = 0; byte < 4; ++byte) {
        RowK rk = scaleOfLane(wmma, int(n % 16), byte);
        ASSERT_EQ(scaleOffset(ScaleLayout::Gfx1250Wmma, st, n, kstep * 4 + rk.k),
                  (n / 32) * 32 * st.cols + kstep * 128 + 4 * (n % 32) + byte);
      }
}

} // namespace
