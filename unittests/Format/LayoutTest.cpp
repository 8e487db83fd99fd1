//===- LayoutTest.cpp - Preshuffle layouts ---------------------------------===//
//
// The closed-form offsets are checked against an independent emulation of
// AITER's view + permute, the lane tables of semantics.md 4.1, bijection and
// inverse properties, and the padding contract.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/Layout.h"
#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"

#include "gtest/gtest.h"

#include <cstring>
#include <set>

using namespace mxfp4;

namespace {

/// Flat offset of index `idx` (over `dims`, row-major) after
/// `x.view(dims).permute(perm).contiguous()`.
int64_t viewPermuteOffset(const std::vector<int64_t> &dims, const std::vector<int> &perm,
                          const std::vector<int64_t> &idx) {
  int64_t off = 0;
  for (int p : perm)
    off = off * dims[size_t(p)] + idx[size_t(p)];
  return off;
}

TEST(WeightLayout, Gfx950MatchesViewPermute) {
  const int64_t n = 48, kb = 128; // K = 256
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < kb; ++c) {
      // view (N/16, 16, Kb/32, 2, 16), permute (0, 2, 3, 1, 4)
      std::vector<int64_t> dims = {n / 16, 16, kb / 32, 2, 16};
      std::vector<int64_t> idx = {r / 16, r % 16, c / 32, (c % 32) / 16, c % 16};
      ASSERT_EQ(weightOffset(WeightLayout::Gfx950Mfma16, kb, r, c),
                viewPermuteOffset(dims, {0, 2, 3, 1, 4}, idx));
    }
}

TEST(WeightLayout, Gfx950LaneReadsItsMfmaOperand) {
  // In each 1024-byte chunk, lane l's 16 bytes at l*16 are row l%16, K elements
  // 32*(l/16) .. +31 of that 128-element MFMA K step (semantics.md 4.1).
  const int64_t kb = 256;
  for (int64_t group = 0; group < 2; ++group)
    for (int64_t step = 0; step < kb / 64; ++step)
      for (int64_t lane = 0; lane < 64; ++lane)
        for (int64_t e = 0; e < 32; ++e) {
          int64_t row = group * 16 + lane % 16;
          int64_t k = step * 128 + 32 * (lane / 16) + e;
          int64_t chunk = group * 16 * kb + step * 1024;
          ASSERT_EQ(weightOffset(WeightLayout::Gfx950Mfma16, kb, row, k / 2),
                    chunk + lane * 16 + e / 2);
        }
}

TEST(WeightLayout, ShuffleIsABijectionAndInverts) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t n = 64, kb = 96;
  std::set<int64_t> seen;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < kb; ++c)
      seen.insert(weightOffset(WeightLayout::Gfx950Mfma16, kb, r, c));
  EXPECT_EQ(int64_t(seen.size()), n * kb);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), n * kb - 1);

  std::vector<uint8_t> w = test::randomBytes(rng, size_t(n * kb));
  for (WeightLayout l : {WeightLayout::RowMajor, WeightLayout::Gfx950Mfma16}) {
    auto s = shuffleWeight(l, w, n, kb);
    ASSERT_OK(s);
    auto back = unshuffleWeight(l, *s, n, kb);
    ASSERT_OK(back);
    ASSERT_EQ(back->size(), w.size());
    EXPECT_EQ(0, std::memcmp(back->data(), w.data(), w.size())) << std::string(toString(l));
  }
}

TEST(WeightLayout, BadShapesAreErrors) {
  std::vector<uint8_t> w(24 * 64);
  EXPECT_ERROR_CONTAINS(shuffleWeight(WeightLayout::Gfx950Mfma16, w, 24, 64), "N % 16 == 0");
  std::vector<uint8_t> w2(16 * 48);
  EXPECT_ERROR_CONTAINS(shuffleWeight(WeightLayout::Gfx950Mfma16, w2, 16, 48), "K = 96");
  EXPECT_ERROR_CONTAINS(shuffleWeight(WeightLayout::Gfx950Mfma16, w2, 32, 64), "needs 2048 bytes");
}

TEST(ScaleLayout, Gfx950MatchesViewPermute) {
  const int64_t rows = 70, kBlocks = 13;
  StorageShape st = scaleStorageShape(ScaleLayout::Gfx950Mfma16, rows, kBlocks);
  EXPECT_EQ(st, (StorageShape{96, 16}));
  for (int64_t x = 0; x < st.rows; ++x)
    for (int64_t y = 0; y < st.cols; ++y) {
      // view (rows/32, 2, 16, cols/8, 2, 4), permute (0, 3, 5, 2, 4, 1)
      std::vector<int64_t> dims = {st.rows / 32, 2, 16, st.cols / 8, 2, 4};
      std::vector<int64_t> idx = {x / 32, (x % 32) / 16, x % 16, y / 8, (y % 8) / 4, y % 4};
      ASSERT_EQ(scaleOffset(ScaleLayout::Gfx950Mfma16, st, x, y),
                viewPermuteOffset(dims, {0, 3, 5, 2, 4, 1}, idx));
    }
}

TEST(ScaleLayout, Gfx950DwordIsLaneByteIsOpsel) {
  // Within a 32-row x 8-kblock tile: dword = 16 * (kblock % 4) + row % 16 (the
  // MFMA lane that holds that scale), byte = 2 * (K step) + (row / 16) (opsel).
  StorageShape st = scaleStorageShape(ScaleLayout::Gfx950Mfma16, 32, 8);
  for (int64_t row = 0; row < 32; ++row)
    for (int64_t kb = 0; kb < 8; ++kb) {
      int64_t off = scaleOffset(ScaleLayout::Gfx950Mfma16, st, row, kb);
      EXPECT_EQ(off / 4, 16 * (kb % 4) + row % 16);
      EXPECT_EQ(off % 4, 2 * (kb / 4) + row / 16);
    }
}

TEST(ScaleLayout, Gfx1250MatchesViewPermute) {
  const int64_t rows = 40, kBlocks = 10;
  StorageShape st = scaleStorageShape(ScaleLayout::Gfx1250Wmma, rows, kBlocks);
  EXPECT_EQ(st, (StorageShape{64, 12}));
  for (int64_t r = 0; r < st.rows; ++r)
    for (int64_t k = 0; k < st.cols; ++k) {
      // view (rows/32, 32, cols/4, 4), permute (0, 2, 1, 3)
      std::vector<int64_t> dims = {st.rows / 32, 32, st.cols / 4, 4};
      std::vector<int64_t> idx = {r / 32, r % 32, k / 4, k % 4};
      ASSERT_EQ(scaleOffset(ScaleLayout::Gfx1250Wmma, st, r, k),
                viewPermuteOffset(dims, {0, 2, 1, 3}, idx));
    }
}

// Seed 002's layouts of the sorted activation scales, three ways: the
// torch reference's view (tiles, R, 16, K/128, 4) permuted (0, 2, 3, 1, 4)
// (AITER _grouped_a8w4_preshuffle_e8m0_scale), the epilogue's dword
// arithmetic, and for R = 1 row-major.
TEST(ScaleLayout, Gfx1250MoeRepsMatchTheReference) {
  for (int64_t rep : {1, 2, 4, 8}) {
    const int64_t rows = 16 * rep * 3, kBlocks = 24, steps = kBlocks / 4;
    std::vector<bool> seen(size_t(rows * kBlocks));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < kBlocks; ++k) {
        const int64_t off = gfx1250MoeScaleOffset(rep, kBlocks, r, k);
        std::vector<int64_t> dims = {rows / (16 * rep), rep, 16, steps, 4};
        std::vector<int64_t> idx = {r / (16 * rep), (r % (16 * rep)) / 16, r % 16, k / 4, k % 4};
        ASSERT_EQ(off, viewPermuteOffset(dims, {0, 2, 3, 1, 4}, idx))
            << rep << " " << r << " " << k;
        const int64_t tile = r / (16 * rep), inTile = r % (16 * rep);
        const int64_t outRow = (tile << 4) | (inTile & 15), wmmaRow = inTile >> 4;
        ASSERT_EQ(off, (outRow * steps * rep + wmmaRow + (k >> 2) * rep) * 4 + (k & 3));
        if (rep == 1)
          ASSERT_EQ(off, r * kBlocks + k);
        ASSERT_FALSE(seen[size_t(off)]);
        seen[size_t(off)] = true;
      }
  }
  // Rep 4: row 17 (row block 1, lane 1) at storage row 1, dword 1 of each
  // K step's 4; row 64 starts the second tile (storage row 16).
  EXPECT_EQ(gfx1250MoeScaleOffset(4, 8, 17, 5), 4 * (1 * 2 * 4 + 1 * 4 + 1) + 1);
  EXPECT_EQ(gfx1250MoeScaleOffset(4, 8, 64, 0), 4 * (16 * 2 * 4));
}

TEST(ScaleLayout, Gfx1250MoeShuffleChecksItsInput) {
  std::vector<uint8_t> s(size_t(64 * 8));
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = uint8_t(i * 7);
  auto shuffled = shuffleGfx1250MoeScales(4, s, 64, 8);
  ASSERT_TRUE(bool(shuffled));
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t k = 0; k < 8; ++k)
      ASSERT_EQ((*shuffled)[size_t(gfx1250MoeScaleOffset(4, 8, r, k))], s[size_t(r * 8 + k)]);
  auto expectError = [](Expected<std::vector<uint8_t>> got, const char *want) {
    ASSERT_FALSE(bool(got));
    EXPECT_NE(got.takeError().message().find(want), std::string::npos);
  };
  expectError(shuffleGfx1250MoeScales(3, s, 64, 8), "must be 1, 2, 4 or 8");
  expectError(shuffleGfx1250MoeScales(8, s, 64, 8), "multiple of 128");
  expectError(shuffleGfx1250MoeScales(4, s, 64, 6), "multiple of 4");
  expectError(shuffleGfx1250MoeScales(4, Span<uint8_t>(s.data(), 100), 64, 8), "needs 512 bytes");
}

TEST(ScaleLayout, ShuffleInvertsAndPadsDeterministically) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  for (ScaleLayout l : {ScaleLayout::RowMajor, ScaleLayout::Gfx950Mfma16, ScaleLayout::Gfx1250Wmma})
    for (auto [rows, kb] : {std::pair<int64_t, int64_t>{1, 1}, {33, 132}, {256, 224}, {7, 9}}) {
      SCOPED_TRACE(testing::Message() << std::string(toString(l)) << " " << rows << "x" << kb);
      std::vector<uint8_t> s = test::randomScales(rng, size_t(rows * kb), 0, 254);
      auto sh = shuffleScales(l, s, rows, kb);
      ASSERT_OK(sh);
      StorageShape st = scaleStorageShape(l, rows, kb);
      ASSERT_EQ(int64_t(sh->size()), st.bytes());
      // Every byte not owned by a logical scale is the pad byte.
      std::vector<bool> owned(sh->size(), false);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < kb; ++k) {
          int64_t off = scaleOffset(l, st, r, k);
          ASSERT_FALSE(owned[size_t(off)]) << "offset " << off << " used twice";
          owned[size_t(off)] = true;
        }
      for (size_t i = 0; i < owned.size(); ++i)
        ASSERT_TRUE(owned[i] || (*sh)[i] == kScalePadByte) << "pad byte " << i;
      auto back = unshuffleScales(l, *sh, rows, kb);
      ASSERT_OK(back);
      EXPECT_EQ(0, std::memcmp(back->data(), s.data(), s.size()));
    }
}

TEST(ScaleLayout, SizeMismatchIsAnError) {
  std::vector<uint8_t> s(10);
  EXPECT_ERROR_CONTAINS(shuffleScales(ScaleLayout::Gfx950Mfma16, s, 4, 4), "got 10");
  EXPECT_ERROR_CONTAINS(unshuffleScales(ScaleLayout::Gfx950Mfma16, s, 4, 4), "need 256 bytes");
}

TEST(Layout, NamesRoundTrip) {
  for (WeightLayout l : {WeightLayout::RowMajor, WeightLayout::Gfx950Mfma16, WeightLayout::Sm90Mma16})
    EXPECT_EQ(parseWeightLayout(toString(l)), l);
  for (ScaleLayout l : {ScaleLayout::RowMajor, ScaleLayout::Gfx950Mfma16, ScaleLayout::Gfx1250Wmma,
                        ScaleLayout::Sm90Mma16})
    EXPECT_EQ(parseScaleLayout(toString(l)), l);
  EXPECT_EQ(parseScaleLayout("nope"), std::nullopt);
}

} // namespace

namespace {

TEST(WeightLayout, Sm90LaneReadsItsMmaOperand) {
  // Per 16 rows x 128 K: lane g*4+t of half h reads 16 bytes at
  // ((nt*chunks + kc)*2 + h)*512 + lane*16 = row nt*16 + h*8 + g, K 32t..+31.
  const int64_t n = 32, kb = 128, chunks = kb / 64;
  std::set<int64_t> seen;
  for (int64_t nt = 0; nt < n / 16; ++nt)
    for (int64_t kc = 0; kc < chunks; ++kc)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t lane = 0; lane < 32; ++lane)
          for (int64_t byte = 0; byte < 16; ++byte) {
            int64_t row = nt * 16 + h * 8 + lane / 4, t = lane % 4;
            int64_t k = kc * 128 + 32 * t + 2 * byte;
            int64_t off = weightOffset(WeightLayout::Sm90Mma16, kb, row, k / 2);
            ASSERT_EQ(off, ((nt * chunks + kc) * 2 + h) * 512 + lane * 16 + byte);
            seen.insert(off);
          }
  EXPECT_EQ(int64_t(seen.size()), n * kb);
  EXPECT_ERROR_CONTAINS(shuffleWeight(WeightLayout::Sm90Mma16, std::vector<uint8_t>(16 * 96), 16, 96),
                        "K % 128 == 0");
}

TEST(ScaleLayout, Sm90DwordHoldsALanesFourRows) {
  // Dword (nw*chunks + kc)*32 + lane holds K-block kc*4 + t of rows
  // nw*32 + i*16 + h*8 + g at byte i*2 + h (lane = g*4 + t).
  const int64_t rows = 64, kBlocks = 8;
  StorageShape st = scaleStorageShape(ScaleLayout::Sm90Mma16, rows, kBlocks);
  const int64_t chunks = st.cols / 4;
  for (int64_t nw = 0; nw < rows / 32; ++nw)
    for (int64_t kc = 0; kc < chunks; ++kc)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t byte = 0; byte < 4; ++byte) {
          int64_t row = nw * 32 + (byte / 2) * 16 + (byte % 2) * 8 + lane / 4;
          int64_t kblock = kc * 4 + lane % 4;
          ASSERT_EQ(scaleOffset(ScaleLayout::Sm90Mma16, st, row, kblock),
                    ((nw * chunks + kc) * 32 + lane) * 4 + byte);
        }
}

TEST(Layout, Sm90ShufflesInvert) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> w = test::randomBytes(rng, 48 * 192);
  auto s = shuffleWeight(WeightLayout::Sm90Mma16, w, 48, 192);
  ASSERT_OK(s);
  auto back = unshuffleWeight(WeightLayout::Sm90Mma16, *s, 48, 192);
  ASSERT_OK(back);
  EXPECT_EQ(*back, w);
  std::vector<uint8_t> sc = test::randomScales(rng, 40 * 12, 0, 254);
  auto ss = shuffleScales(ScaleLayout::Sm90Mma16, sc, 40, 12);
  ASSERT_OK(ss);
  auto sback = unshuffleScales(ScaleLayout::Sm90Mma16, *ss, 40, 12);
  ASSERT_OK(sback);
  EXPECT_EQ(*sback, sc);
}

} // namespace
