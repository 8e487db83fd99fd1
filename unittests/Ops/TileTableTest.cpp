//===- TileTableTest.cpp - The tile table only picks kernels that exist ---===//
//
// selectGemmA4W4Tile is a hand-written rule plus measured entries; whatever
// it returns for any M must be a spec that verifies (BM, split-K dividing
// the K steps, shared memory), or gemmA4W4 would fail at run time.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Expected.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include "gtest/gtest.h"

#include <tuple>
#include <vector>

using namespace mxfp4;

namespace {

TEST(TileTable, EveryChoiceVerifies) {
  const std::pair<int64_t, int64_t> shapes[] = {
      {8448, 7168}, {7168, 4224}, {1536, 7168}, {7168, 768},  {7168, 7168},
      {8448, 4224}, {256, 256},   {4096, 128},  {4096, 2048}, {4096, 14336},
      {9216, 7168}, {7168, 4608}, {3584, 7168}, {7168, 3584}, {1536, 4224},
      {4096, 2560}, {4096, 1024}, {4096, 640},  {4096, 4736}};
  for (Arch arch : {Arch::GFX950, Arch::GFX1250, Arch::SM90A})
    for (auto [n, k] : shapes)
      for (int64_t m = 1; m <= 4096; m += (m < 300 ? 1 : 37)) {
        SCOPED_TRACE(testing::Message()
                     << std::string(toString(arch)) << " N=" << n << " K=" << k << " M=" << m);
        GemmA4W4Tile t = selectGemmA4W4Tile(arch, n, k, m);
        OpKind op = t.preQuantize ? OpKind::GemmQdqA4W4 : OpKind::GemmA4W4;
        if (arch != Arch::SM90A) {
          ASSERT_FALSE(t.preQuantize) << "quantize-once is sm_90a only";
          op = OpKind::GemmA4W4;
        }
        // Shapes no tile supports are rejected by prepareGemmA4W4Weight with
        // the constraint's message; the table need not make them work.
        if (!makeGemmA4W4Spec(arch, n, k, arch == Arch::SM90A ? 8 : 16))
          continue;
        // Weights with tails: dispatch asks the table for their whole tiles
        // (GemmA4W4PlanTest.RaggedShapesPlanAtEveryM).
        if (gemmWeightRows(arch, n) != n || gemmWeightK(arch, k) != k)
          continue;
        auto spec = makeGemmA4W4Spec(arch, n, k, t.bm, kDefaultScaleRounding, Activation::None,
                                     {0.0f, 0.0f}, op);
        ASSERT_OK(spec);
        spec->splitK = t.splitK;
        spec->stages = t.stages;
        spec->twoWarpgroups = t.twoWarpgroups && op == OpKind::GemmQdqA4W4 && t.bm < 128;
        spec->persistent = t.persistent && op == OpKind::GemmQdqA4W4 && t.splitK == 1;
        spec->streamK = t.streamK && op == OpKind::GemmQdqA4W4 && t.splitK == 1 && t.bm >= 128;
        if (spec->streamK)
          spec->persistent = false;
        if (t.bk)
          spec->bk = t.bk;
        if (t.bn)
          spec->bn = t.bn;
        // The table's decode and warp-split entries quantize inline and run
        // as they are.
        if (t.decode) {
          ASSERT_EQ(op, OpKind::GemmA4W4);
          spec->decode = true;
        }
        if (t.warpSplitK) {
          ASSERT_EQ(op, OpKind::GemmA4W4);
          spec->warpSplitK = t.warpSplitK;
        }
        ASSERT_OK(verifyKernelSpec(*spec));
        if (t.splitM) {
          // A split of M: whole BM 256 pairs first, on the image, and the
          // rest's own tile splits no further.
          ASSERT_TRUE(arch == Arch::SM90A && t.preQuantize);
          ASSERT_EQ(t.splitM % 256, 0);
          ASSERT_LT(t.splitM, m);
          ASSERT_EQ(selectGemmA4W4Tile(arch, n, k, m - t.splitM).splitM, 0);
        }
        if (t.preQuantize) {
          ASSERT_OK(makeQuantizeMxSpec(arch, k, selectQuantizeMxBm(m, k), kDefaultScaleRounding,
                                       OpKind::QdqMx));
          ASSERT_OK(makeQuantizeMxSpec(arch, k, selectQuantizeMxBm(m, k)));
          spec->op = OpKind::GemmMxA4W4; // with a quantization dump
          spec->bm = std::min<int64_t>(spec->bm, 128);
          spec->twoWarpgroups = false;
          spec->persistent = false;
          spec->streamK = false;
          ASSERT_OK(verifyKernelSpec(*spec));
        }
      }
}

// The rule's split-K for BM 128 tiles reproduces the measured winners of
// the split-K sweep (mxfp4-bench --split-k=), where no measured entry
// speaks for the shape.
TEST(TileTable, Bm128SplitsMatchTheSweep) {
  struct Want {
    int64_t n, k, m, bm, splitK, splitM = 0, bn = 0;
  };
  // BM 256 where it won (--bm=256), on the first 1792 rows of 7168x4224 M =
  // 2048 (--split-m=); BN 64 tiles instead of splits or a persistent grid
  // at M = 128 of N = 7168 (--bn=64); 1536x7168 and 1536x4224 M = 65..128:
  // BN 64 x 4 splits on 4 stages (before, 8 splits of BN 128); 1536x7168 M
  // = 1024 / 2048, 1536x4224 and 9216x7168 M = 2048: BN 192 x BM 128 on 4
  // stages (--bn=192).
  for (Want w : {Want{1536, 7168, 128, 128, 4, 0, 64},
                 {1536, 7168, 96, 128, 4, 0, 64},
                 {1536, 4224, 128, 128, 4, 0, 64},
                 {1536, 7168, 512, 128, 2},
                 {1536, 7168, 1024, 128, 2, 0, 192},
                 {1536, 7168, 2048, 128, 1, 0, 192},
                 {1536, 4224, 2048, 128, 1, 0, 192},
                 {9216, 7168, 2048, 128, 1, 0, 192},
                 {7168, 4224, 128, 128, 1, 0, 64},
                 {7168, 4224, 512, 256, 1},
                 {7168, 4224, 1024, 256, 1},
                 {7168, 4224, 2048, 256, 1, 1792},
                 {8448, 7168, 128, 128, 2},
                 {8448, 7168, 256, 128, 1},
                 {8448, 7168, 512, 256, 1},
                 {8448, 7168, 1024, 128, 1},
                 {8448, 7168, 2048, 128, 1},
                 {7168, 768, 128, 128, 1, 0, 64},
                 {7168, 768, 512, 256, 1},
                 {7168, 768, 2048, 128, 1}}) {
    SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << w.m);
    GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, w.m);
    EXPECT_EQ(t.bm, w.bm);
    EXPECT_EQ(t.splitK, w.splitK);
    EXPECT_EQ(t.splitM, w.splitM);
    EXPECT_EQ(t.bn, w.bn);
    EXPECT_TRUE(t.preQuantize);
    // A persistent grid where BN 128 tiles have few K steps (--persistent=),
    // and the measured 8448x7168 M = 1024 and 2048.
    EXPECT_EQ(t.persistent, (w.k == 768 && w.bm == 128 && w.bn == 0) ||
                                (w.n == 8448 && (w.m == 1024 || w.m == 2048)));
    // Stream-K won nowhere after BM 192 (--stream-k=).
    EXPECT_FALSE(t.streamK);
    if (w.bn == 192 || (w.bn == 64 && w.splitK == 4))
      EXPECT_EQ(t.stages, 4);
  }
}

// From M = 33 one BM 128 row block, whatever N (--bm=128 at M = 33..127),
// split over K by the rule's cost where the tiles are few; no persistent
// grid for a single round.
TEST(TileTable, Bm128FromM33) {
  struct Want {
    int64_t n, k, m, splitK;
  };
  // 9216x7168: 3 splits in two rounds, as at M = 128 (1 / 2 splits measured
  // slower at M = 48-96).
  for (Want w : {Want{9216, 7168, 48, 3},
                 {9216, 7168, 96, 3},
                 {7168, 4608, 64, 2},
                 {7168, 3584, 64, 2},
                 {7168, 4224, 64, 2},
                 {3584, 7168, 64, 4}}) {
    SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << w.m);
    GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, w.m);
    EXPECT_EQ(t.bm, 128);
    EXPECT_TRUE(t.preQuantize);
    EXPECT_EQ(t.splitK, w.splitK);
  }
  for (int64_t m : {33, 48, 64}) {
    GemmA4W4Tile shortK = selectGemmA4W4Tile(Arch::SM90A, 7168, 768, m);
    EXPECT_EQ(shortK.bm, 128) << "M=" << m;
    EXPECT_TRUE(shortK.preQuantize) << "M=" << m; // inline at BM 128: far slower
    EXPECT_FALSE(shortK.persistent) << "M=" << m;
  }
}

// Stream-K where more than a round of BM 128 tiles leaves the last round at
// most half full, in at most 4 rounds (9216x7168 M = 512: 288 tiles,
// --stream-k=); not where rounds are whole or nearly.
TEST(TileTable, StreamKEvensBadRounds) {
  GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, 9216, 7168, 512);
  EXPECT_TRUE(t.streamK);
  EXPECT_EQ(t.bm, 128);
  EXPECT_EQ(t.splitK, 1);
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 9216, 7168, 640).streamK);  // 360: 96 in the last
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 9216, 7168, 1024).streamK); // 576: 5 rounds
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 3584, 7168, 512).streamK);  // 112: one round
}

// Short K at M <= 8: the warp-split variant, one 128-K chunk a warp (K /
// 128 warps), BN 32, where its warps fit about a wave (--warp-split-k=); M
// 9..16 the decode variant at BK 128 in G warpgroups of two or three K
// steps each, at BM 16 where the N tiles fit one workgroup a SM
// (--decode=G).
TEST(TileTable, ShortKDecodeTakesWarpgroups) {
  struct Want {
    int64_t n, k, groups;
  };
  for (const Want &w :
       {Want{7168, 768, 3}, Want{7168, 512, 2}, Want{7168, 1024, 4}, Want{2048, 1536, 4},
        Want{4096, 1024, 4}, Want{32768, 512, 2}, Want{7168, 2048, 0}, Want{2048, 2048, 0},
        Want{16384, 1024, 0}, Want{4096, 640, 0}})
    for (int64_t m : {1, 5, 8}) {
      SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << m);
      GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, m);
      EXPECT_FALSE(t.decode);
      EXPECT_EQ(t.warpSplitK, w.k / 128);
      EXPECT_EQ(t.bm, 8);
      EXPECT_EQ(t.bn, 32);
      EXPECT_EQ(t.splitK, 1);
    }
  // Past one wave of its workgroups, three or four decode warpgroups
  // where the decode rule has them.
  for (const Want &w : {Want{7168, 1536, 4}, Want{16384, 768, 3}})
    for (int64_t m : {1, 8}) {
      SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << m);
      GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, m);
      EXPECT_EQ(t.warpSplitK, 0);
      EXPECT_EQ(t.decodeGroups, w.groups);
    }
  // Without the variant (warpSplitK = 0 forced), the decode warpgroups
  // it replaced.
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 1, false).decodeGroups, 3);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 1024, 8, false).decodeGroups, 4);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 1024, 8, false).warpSplitK, 0);
  // Past 16 chunks, or a grid of several waves, the decode variant.
  EXPECT_TRUE(selectGemmA4W4Tile(Arch::SM90A, 7168, 4224, 1).decode);
  EXPECT_TRUE(selectGemmA4W4Tile(Arch::SM90A, 1536, 4096, 1).decode);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 24576, 1536, 1).warpSplitK, 0);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 9).warpSplitK, 0);
  // Up to M = 16 at BM 16 where the N tiles fit one workgroup a SM.
  for (const Want &w :
       {Want{7168, 512, 2}, Want{7168, 1024, 4}, Want{7168, 1536, 4}, Want{4096, 1024, 4}})
    for (int64_t m : {9, 12, 16}) {
      SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << m);
      GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, m);
      EXPECT_TRUE(t.decode);
      EXPECT_EQ(t.bm, 16);
      EXPECT_EQ(t.decodeGroups, w.groups);
    }
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 1024, 17).decodeGroups, 1);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 16384, 768, 16).decodeGroups, 1); // 256 tiles
  // 16384 x 1024 at M = 1: 4096 warps, the warp-split variant's; 24576 x
  // 1536 (9216 warps; 384 N tiles, too many for three decode warpgroups,
  // two would take six steps each): the split rule's tiles.
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 16384, 1024, 1).warpSplitK, 8);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 24576, 1536, 1).decodeGroups, 1);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 24576, 1536, 1).splitK, 3);
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 9).decode);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 8448, 7168, 1).decodeGroups, 1);
}

// BN 64 where N / 128 tiles (times the splits) would fill at most half of
// the H200's 132 SMs with short K; never with long K, BM 256 or two
// warpgroups (--bn=64).
TEST(TileTable, NarrowTilesWhereSmsWouldIdle) {
  for (int64_t m : {32, 128})
    EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, m).bn, 64) << "M=" << m;
  for (int64_t m : {1, 8}) // the warp-split variant's own BN
    EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, m).bn, 32) << "M=" << m;
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 4096, 1024, 128).bn, 64); // the rule: 32 tiles
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 1024, 24).bn, 0);   // 56 tiles x 4 splits
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 64).bn, 64);   // BM 128: 56 tiles
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 256).bn, 0);   // 112 tiles
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 7168, 768, 2048).bn, 0);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 8192, 7168, 64).bn, 0); // split-K fills them
  EXPECT_EQ(selectGemmA4W4Tile(Arch::SM90A, 1536, 7168, 64).bn, 0); // long K: splits instead
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX950, 7168, 768, 1).bn, 0);
}

// AMD: fewer output tiles than compute units split K toward two workgroups
// a CU (TargetInfo::computeUnits), at most 16 splits of at least two steps,
// with at most the weights' bytes of workspace traffic.
TEST(TileTable, AmdSplitsKWhereTilesLeaveComputeUnitsIdle) {
  // gfx950: 256 CUs.
  GemmA4W4Tile t = selectGemmA4W4Tile(Arch::GFX950, 8448, 7168, 1); // 33 tiles, 28 steps
  EXPECT_EQ(t.bm, 16);
  EXPECT_EQ(t.splitK, 14);
  t = selectGemmA4W4Tile(Arch::GFX950, 8448, 7168, 128); // BM 64: 66 tiles
  EXPECT_EQ(t.bm, 64);
  EXPECT_EQ(t.splitK, 3); // 8 would move more workspace than weights
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX950, 8448, 7168, 32).splitK, 8);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX950, 8448, 7168, 512).splitK, 1); // 264 tiles
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX950, 7168, 4224, 1).splitK, 16);  // 28 tiles, 33 steps
  // gfx1250: 64 CUs.
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX1250, 8448, 7168, 1).splitK, 4);
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX1250, 8448, 7168, 128).splitK, 1); // 66 tiles
  EXPECT_EQ(selectGemmA4W4Tile(Arch::GFX1250, 7168, 4224, 1).splitK, 5);
  for (Arch arch : {Arch::GFX950, Arch::GFX1250}) {
    EXPECT_EQ(selectGemmA4W4Tile(arch, 256, 256, 1).splitK, 1);  // one K step
    EXPECT_EQ(selectGemmA4W4Tile(arch, 256, 1024, 1).splitK, 2); // four steps
  }
}

// 8 < M <= 32 with long K, where no entry speaks for the shape: the image
// in two warpgroups, about two workgroups a SM (the splits divide the K
// steps), and as many stages as two of them fit, at most a split's steps + 1
// (--bm= --split-k= --stages= --warpgroups=).
TEST(TileTable, SmallBatchesOnTheImage) {
  struct Want {
    int64_t n, k, m, bm, splitK, stages;
  };
  for (Want w : {Want{7168, 7168, 12, 16, 4, 8}, // 56 tiles: want 5, 4 divides 56 steps
                 {7168, 7168, 9, 16, 4, 8},
                 {8448, 4224, 16, 16, 3, 8}, // 66 tiles, 33 steps
                 // One wave on 8 stages where each split gets <= 16 steps: 32
                 // tiles x 4 splits of 8 steps; 16 x 8 of 7; 16 x 8 of 6.
                 {4096, 4096, 24, 32, 4, 8},
                 {2048, 7168, 24, 32, 8, 8},
                 {2048, 6144, 20, 32, 8, 8},
                 // Four splits of 28 steps: two a SM instead, 256 workgroups
                 // on 6 stages.
                 {4096, 14336, 24, 32, 8, 6}}) {
    SCOPED_TRACE(testing::Message() << "N=" << w.n << " K=" << w.k << " M=" << w.m);
    GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, w.n, w.k, w.m);
    EXPECT_TRUE(t.preQuantize);
    EXPECT_TRUE(t.twoWarpgroups);
    EXPECT_EQ(t.bm, w.bm);
    EXPECT_EQ(t.splitK, w.splitK);
    EXPECT_EQ(t.stages, w.stages);
  }
  // Short K keeps the inline rule (few N tiles at M <= 16 with long K take
  // the decode variant, DecodeAtBm16WhereItsGridIsSmall).
  for (auto [n, k, m] : {std::tuple<int64_t, int64_t, int64_t>{7168, 1024, 24}}) {
    GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, n, k, m);
    EXPECT_FALSE(t.twoWarpgroups) << n << "x" << k << " M=" << m;
    EXPECT_EQ(t.bm, 16) << n << "x" << k << " M=" << m;
  }
}

/// The rule picks the decode variant at BN 64 on the inline path.
static void expectDecodeTile(int64_t n, int64_t k, int64_t m, int64_t bm, int64_t splitK,
                             int64_t bk) {
  SCOPED_TRACE(testing::Message() << "N=" << n << " K=" << k << " M=" << m);
  GemmA4W4Tile t = selectGemmA4W4Tile(Arch::SM90A, n, k, m);
  EXPECT_TRUE(t.decode);
  EXPECT_FALSE(t.preQuantize);
  EXPECT_EQ(t.bm, bm);
  EXPECT_EQ(t.bn, 64);
  EXPECT_EQ(t.splitK, splitK);
  EXPECT_EQ(t.bk, bk);
}

// M <= 8 where no entry speaks for the shape: the decode variant at BN 64,
// 4 K steps a split where they divide so, else 3 (the model shapes'
// sweep, --preset=model-dense --split-k=); short K takes the warp-split
// variant (ShortKDecodeTakesWarpgroups).
TEST(TileTable, DecodeWhereNoEntrySpeaks) {
  struct Want {
    int64_t n, k, splitK, bk;
  };
  for (Want w : {Want{9216, 7168, 14, 0}, // 56 steps: 4 a split
                 {7168, 4608, 9, 0},
                 {3584, 7168, 14, 0},
                 {7168, 3584, 7, 0},
                 {1536, 4224, 11, 0}, // 33 steps: 3 a split
                 {4096, 2560, 5, 0}}) // 20 steps
    for (int64_t m : {1, 5, 8})
      expectDecodeTile(w.n, w.k, m, 8, w.splitK, w.bk);
  // From M = 9 the rule's other tiles (large grids, below); no even split
  // (37 steps): the K loop.
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 9216, 7168, 9).decode);
  EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, 4096, 37 * 128, 1).decode);
}

TEST(TileTable, DecodeAtBm16WhereItsGridIsSmall) {
  // 8 < M <= 16: the decode variant at BM 16 where its grid is at most six
  // workgroups an SM (N / 64 x splits <= 792) and K long; up to M = 32 in
  // two row tiles where those are at most four an SM (528).
  struct Want {
    int64_t n, k, splitK;
  };
  struct Case {
    Want w;
    std::vector<int64_t> ms;
  };
  for (const Case &c : {Case{{1536, 7168, 14}, {9, 12, 16}},
                        Case{{1536, 4224, 11}, {9, 16, 17, 24, 32}}, Case{{7168, 3584, 7}, {9, 16}},
                        Case{{3584, 7168, 14}, {9, 16}}, Case{{2048, 7168, 14}, {12, 16}},
                        Case{{4096, 2048, 4}, {16, 20, 32}}, Case{{1024, 8192, 16}, {24}}})
    for (int64_t m : c.ms)
      expectDecodeTile(c.w.n, c.w.k, m, 16, c.w.splitK, 0);
  // Larger grids (7168x4608: 9 splits of 112 tiles; 9216x7168), short K
  // (7168x768's entry; other short K takes warpgroups at BM 16,
  // ShortKDecodeTakesWarpgroups) and M = 33 keep the other tiles.
  for (auto [n, k, m] : {std::tuple<int64_t, int64_t, int64_t>{7168, 4608, 16},
                         {9216, 7168, 12},
                         {7168, 768, 16},
                         {1536, 7168, 17}, // two row tiles: 672 workgroups
                         {7168, 3584, 24},
                         {1536, 4224, 33}}) {
    SCOPED_TRACE(testing::Message() << "N=" << n << " K=" << k << " M=" << m);
    EXPECT_FALSE(selectGemmA4W4Tile(Arch::SM90A, n, k, m).decode);
  }
}

TEST(TileTable, UnsupportedShapesSayWhy) {
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 4096, 100, 8), "needs K % 32 == 0");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::GFX950, 4096, 7168 + 16, 16), "K % 32 == 0");
}

// The quantizer's row tile covers M without idle rows (a power of two >= M
// up to 64) and shrinks rather than leave the H200's 132 SMs with fewer
// than ~4 workgroups each: its workgroups are short latency-bound chains.
TEST(TileTable, QuantizerRowTile) {
  for (int64_t k : {768, 4224, 7168})
    for (int64_t m : {1, 5, 8, 9, 32, 64, 100, 128, 300, 512, 2048, 8192}) {
      SCOPED_TRACE(testing::Message() << "M " << m << " K " << k);
      const int64_t bm = selectQuantizeMxBm(m, k);
      EXPECT_TRUE(bm == 8 || bm == 16 || bm == 32 || bm == 64);
      if (bm > 8) {
        EXPECT_LT(bm / 2, m); // no smaller power of two covers M
        EXPECT_GE((k / 128) * ((m + bm - 1) / bm), 4 * 132);
      }
    }
  // K = 7168, M = 128: BM 8, 896 workgroups (BM 16: 448); M = 2048: BM 64, 896.
  EXPECT_EQ(selectQuantizeMxBm(128, 7168), 8);
  EXPECT_EQ(selectQuantizeMxBm(2048, 7168), 64);
}

} // namespace
