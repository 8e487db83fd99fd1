//===- Sm90PipelineTest.cpp - Shared memory of the sm_90a GEMMs -----------===//

#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Kernels/Sm90Geometry.h"

#include "TestUtil/Expected.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using namespace mxfp4;

/// The (BM, BK) tiles the sm_90a lowering accepts (BM x BK <= 128 x 128).
static std::vector<std::pair<int64_t, int64_t>> loweredTiles() {
  std::vector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t bm : {8, 16, 32, 64, 128})
    for (int64_t bk : {128, 256})
      if (bm * bk <= 128 * 128)
        tiles.push_back({bm, bk});
  return tiles;
}

// Every tile the lowering accepts fits an H200 workgroup (227 KiB), and each
// TMA destination is 128-byte aligned, each mbarrier 8-byte aligned.
TEST(Sm90Pipeline, EveryTileFitsAndIsAligned) {
  for (auto [bm, bk] : loweredTiles()) {
    SCOPED_TRACE(testing::Message() << "BM " << bm << " BK " << bk);
    const sm90::SharedLayout l = sm90::sharedLayout(bm, bk);
    EXPECT_LE(l.totalBytes(), 227 * 1024);
    if (bm == 128) { // two workgroups per SM, each with 1 KiB reserved by the driver
      EXPECT_LE(2 * (l.totalBytes() + 1024), 228 * 1024);
    }
    EXPECT_GE(l.stages, 3);
    EXPECT_EQ(l.activationBytes, 2 * bm * bk * 2);
    EXPECT_EQ(l.stagesOffset() % 128, 0);
    EXPECT_EQ(l.stageBytes() % 128, 0);
    EXPECT_EQ(l.scalesInStage(), bk / 128 * sm90::weightBoxBytes());
    EXPECT_EQ(l.stageBytes() - l.scalesInStage(), bk / 128 * sm90::scaleBoxBytes());
    EXPECT_EQ(l.barriersOffset() % 8, 0);
    // One stage holds the step's weight rows and scales exactly.
    EXPECT_EQ(l.stageBytes(), sm90::kTileRows * bk / 2 + sm90::kTileRows * bk / 32);
  }
}

// The launch asks for exactly the layout's dynamic shared memory.
TEST(Sm90Pipeline, LaunchGeometryUsesTheLayout) {
  for (int64_t bm : {8, 64, 128}) {
    Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, bm);
    ASSERT_OK(spec);
    CompiledKernel k;
    k.spec = *spec;
    LaunchGeometry g = k.geometry(100);
    EXPECT_EQ(g.sharedBytes, unsigned(sm90::sharedLayout(bm, spec->bk).totalBytes()));
    EXPECT_EQ(g.block[0], bm == 128 ? 256u : 128u);
    EXPECT_FALSE(g.programmaticDependent);
  }
}

// Staged activations: each stage starts with the step's BM x BK bf16 image
// slabs, then the weights; BM 128 takes one SM, smaller tiles a third.
TEST(Sm90Pipeline, StagedActivationsFitAndAlign) {
  for (auto [bm, bk] : loweredTiles()) {
    SCOPED_TRACE(testing::Message() << "BM " << bm << " BK " << bk);
    const sm90::SharedLayout l = sm90::sharedLayout(bm, bk, /*stagedActivations=*/true);
    EXPECT_EQ(l.activationBytes, 0);
    EXPECT_EQ(l.stagesOffset(), 0);
    EXPECT_EQ(l.weightsInStage(), bm * bk * 2);
    EXPECT_EQ(l.weightsInStage() % 128, 0);
    EXPECT_EQ(l.stageBytes() % 128, 0);
    EXPECT_EQ(l.stageBytes(), bm * bk * 2 + sm90::kTileRows * bk / 2 + sm90::kTileRows * bk / 32);
    EXPECT_GE(l.stages, 3); // the staged loop refills a stage a step after its wgmmas
    EXPECT_LE(l.totalBytes(), 227 * 1024);
    if (bm < 128 && bk == 128) { // three workgroups per SM
      EXPECT_LE(3 * (l.totalBytes() + 1024), 228 * 1024);
    }
  }
  Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 128, kDefaultScaleRounding,
                                               Activation::None, {0.0f, 0.0f},
                                               OpKind::GemmQdqA4W4);
  ASSERT_OK(spec);
  CompiledKernel k;
  k.spec = *spec;
  EXPECT_EQ(k.geometry(300).sharedBytes, unsigned(sm90::sharedLayout(128, 128, true).totalBytes()));
  // It waits for qdq_mxfp4 itself: launched as its programmatic dependent.
  EXPECT_TRUE(k.geometry(300).programmaticDependent);
  EXPECT_EQ(k.geometry(300).persistentPerSm, 0u);
  // Persistent: one linear grid of all 66 x 3 tiles, which the launch may
  // shrink to the resident workgroups; the output tile has its own region
  // between the four stages and the barriers.
  k.spec.persistent = true;
  LaunchGeometry g = k.geometry(300);
  EXPECT_EQ(g.grid[0], 66u * 3u);
  EXPECT_EQ(g.grid[1], 1u);
  EXPECT_EQ(g.persistentPerSm, 1u);
  const sm90::SharedLayout p = sm90::sharedLayout(128, 128, true, 0, /*persistent=*/true);
  EXPECT_EQ(p.stages, 4);
  EXPECT_EQ(p.outputOffset(), 4 * p.stageBytes());
  EXPECT_EQ(p.barriersOffset(), p.outputOffset() + 128 * sm90::kStagedRowBytes);
  EXPECT_EQ(g.sharedBytes, unsigned(p.totalBytes()));
  EXPECT_LE(p.totalBytes(), sm90::kMaxSharedBytes);
}

// BN 64: half the weight and scale boxes in every stage (still 128-byte
// aligned), the same stage counts or more, one warpgroup at any BM, twice
// the workgroups along N, and its own pair of TMA descriptors.
TEST(Sm90Pipeline, NarrowTileHalvesTheBoxes) {
  for (bool staged : {false, true})
    for (auto [bm, bk] : loweredTiles()) {
      SCOPED_TRACE(testing::Message() << "BM " << bm << " BK " << bk << " staged " << staged);
      const sm90::SharedLayout wide = sm90::sharedLayout(bm, bk, staged);
      const sm90::SharedLayout l = sm90::sharedLayout(bm, bk, staged, 0, false, 64);
      // Staged tiles below BM 128 fit as many stages as 74 KiB hold.
      if (staged && bm < 128) {
        EXPECT_GE(l.stages, wide.stages);
      } else {
        EXPECT_EQ(l.stages, wide.stages);
      }
      EXPECT_EQ(l.weightBox(), 64 * 128 / 2);
      EXPECT_EQ(l.scaleBox(), 64 * 128 / 32);
      EXPECT_EQ(l.stageBytes(), (staged ? bm * bk * 2 : 0) + 64 * bk / 2 + 64 * bk / 32);
      EXPECT_EQ(l.stageBytes() % 128, 0);
      EXPECT_EQ(l.scalesInStage() % 128, 0);
      EXPECT_LE(l.totalBytes(), sm90::kMaxSharedBytes);
      if (staged && bm < 128 && bk == 128) { // three workgroups per SM
        EXPECT_LE(3 * (l.totalBytes() + 1024), 228 * 1024);
      }
      EXPECT_EQ(sm90::gemmWarpgroups(bm, false, 64), 1);
    }
  EXPECT_EQ(sm90::descriptorOffset(128), 0);
  EXPECT_EQ(sm90::descriptorOffset(64), 2 * sm90::kDescriptorBytes);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 7168, 768, 128, kDefaultScaleRounding,
                                               Activation::None, {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(spec);
  spec->bn = 64;
  ASSERT_OK(verifyKernelSpec(*spec));
  EXPECT_NE(spec->name().find("_bn64_"), std::string::npos);
  CompiledKernel k;
  k.spec = *spec;
  LaunchGeometry g = k.geometry(128);
  EXPECT_EQ(g.grid[0], 112u);
  EXPECT_EQ(g.block[0], 128u);
  EXPECT_EQ(g.sharedBytes, unsigned(sm90::sharedLayout(128, 128, true, 0, false, 64).totalBytes()));
  // One warpgroup: no BM 256, no second warpgroup.
  KernelSpec bad = *spec;
  bad.bm = 256;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "BN 64 runs one warpgroup");
  bad = *spec;
  bad.bm = 32;
  bad.twoWarpgroups = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "BN 64 runs one warpgroup");
  bad = *spec;
  bad.bn = 32;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "BN must be 128 or 64");
}

// BN 192 on the image at BM 128: three warpgroups (384 threads), three BN
// 64 boxes a chunk from the narrow descriptors, five stages of 44.75 KiB; a
// staged output tile of 400-byte rows; split-K in a cluster for two splits
// only; N % 192 == 0; one tile per workgroup.
TEST(Sm90Pipeline, Bn192OnTheImageFits) {
  const sm90::SharedLayout l = sm90::sharedLayout(128, 128, true, 0, false, 192);
  EXPECT_EQ(l.stages, 5);
  EXPECT_EQ(l.stageBytes(), 128 * 128 * 2 + 3 * 4096 + 3 * 256);
  EXPECT_LE(l.totalBytes(), sm90::kMaxSharedBytes);
  EXPECT_EQ(sm90::boxRows(192), 64);
  EXPECT_EQ(sm90::boxRows(128), 128);
  EXPECT_EQ(sm90::descriptorOffset(192), sm90::descriptorOffset(64));
  EXPECT_EQ(sm90::stagedRowBytes(192), 400);
  EXPECT_EQ(sm90::stagedRowBytes(128), sm90::kStagedRowBytes);
  EXPECT_LE(128 * sm90::stagedRowBytes(192), l.barriersOffset());
  EXPECT_LE(16 * 384 * 16, l.totalBytes()); // a cluster sum's partial tile
  EXPECT_EQ(sm90::gemmWarpgroups(128, false, 192), 3);
  EXPECT_TRUE(sm90::clusterSplitK(128, 2, 192));
  EXPECT_FALSE(sm90::clusterSplitK(128, 4, 192));
  EXPECT_TRUE(sm90::clusterSplitK(128, 4));
  Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 128, kDefaultScaleRounding,
                                               Activation::None, {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(spec);
  spec->bn = 192;
  ASSERT_OK(verifyKernelSpec(*spec));
  EXPECT_NE(spec->name().find("_bn192_"), std::string::npos);
  CompiledKernel k;
  k.spec = *spec;
  LaunchGeometry g = k.geometry(2048);
  EXPECT_EQ(g.grid[0], 8u);
  EXPECT_EQ(g.grid[1], 16u);
  EXPECT_EQ(g.block[0], 384u);
  EXPECT_EQ(g.sharedBytes, unsigned(l.totalBytes()));
  KernelSpec bad = *spec;
  bad.bm = 64;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "BN 192 is a tile of gemm_qdqa4w4 with BM 128");
  bad = *spec;
  bad.persistent = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "one tile per workgroup");
  bad = *spec;
  bad.op = OpKind::GemmMxA4W4;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "BN 192 is a tile of gemm_qdqa4w4");
  bad = *spec;
  bad.n = 7168;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(bad), "N % 192 == 0");
}

// Stream-K: a linear grid of one workgroup per (tile, K step) at most,
// which the launch shrinks to the resident workgroups (one per SM: the
// one-tile kernel's five or three stages, its output staged in a stage);
// two f32 partial tiles of workspace per workgroup.
TEST(Sm90Pipeline, StreamKGrid) {
  for (int64_t bm : {128, 256}) {
    Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, bm,
                                                 kDefaultScaleRounding, Activation::None,
                                                 {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
    ASSERT_OK(spec);
    spec->streamK = true;
    ASSERT_OK(verifyKernelSpec(*spec));
    CompiledKernel k;
    k.spec = *spec;
    const int64_t tiles = (300 + bm - 1) / bm * 12;
    EXPECT_EQ(streamKIterations(*spec, 300), tiles * 56);
    LaunchGeometry g = k.geometry(300);
    EXPECT_EQ(g.grid[0], unsigned(tiles * 56));
    EXPECT_EQ(g.grid[1], 1u);
    EXPECT_EQ(g.grid[2], 1u);
    EXPECT_EQ(g.persistentPerSm, 1u);
    EXPECT_EQ(launchedGridX(g, 132), 132u);
    EXPECT_EQ(launchedGridX(g, 0), g.grid[0]);
    const sm90::SharedLayout l = sm90::sharedLayout(bm, 128, true);
    EXPECT_EQ(g.sharedBytes, unsigned(l.totalBytes()));
    EXPECT_LE(bm * sm90::kStagedRowBytes, l.stageBytes());
    EXPECT_EQ(streamKWorkspaceBytes(*spec, 132), 2 * 132 * bm * 128 * 4);
  }
}

// BM 256 on the image: three stages of 64 KiB of activations and 8.5 KiB
// of weights, two warpgroups, its staged output tile and split-K partial
// tile fit, M tiles of 256 rows.
TEST(Sm90Pipeline, Bm256OnTheImageFits) {
  const sm90::SharedLayout l = sm90::sharedLayout(256, 128, /*stagedActivations=*/true);
  EXPECT_EQ(l.stages, 3);
  EXPECT_EQ(l.stageBytes(), 256 * 128 * 2 + 8192 + 512);
  EXPECT_LE(l.totalBytes(), sm90::kMaxSharedBytes);
  EXPECT_LE(256 * sm90::kStagedRowBytes, l.barriersOffset());
  EXPECT_LE(32 * 256 * 16, l.barriersOffset()); // 32 vectors of 256 threads
  EXPECT_EQ(sm90::gemmWarpgroups(256), 2);
  EXPECT_TRUE(sm90::clusterSplitK(256, 2));
  Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 7168, 4224, 256,
                                               kDefaultScaleRounding, Activation::None,
                                               {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(spec);
  CompiledKernel k;
  k.spec = *spec;
  EXPECT_EQ(k.geometry(600).grid[1], 3u);
  EXPECT_EQ(k.geometry(600).block[0], 256u);
  EXPECT_EQ(k.geometry(600).sharedBytes, unsigned(l.totalBytes()));
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 7168, 4224, 256), "256 for gemm_qdqa4w4");
  spec->persistent = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*spec), "BM 256 takes no persistent grid");
  spec->persistent = false;
  spec->bk = 256;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*spec), "BM 256 takes BK 128");
}

// BM 192 on the image: three stages of 48 KiB of activations and 8.5 KiB of
// weights, with room for the persistent grid's output region; two
// warpgroups, M tiles of 192 rows (11 at M = 2048: 132 tiles at N = 1536).
TEST(Sm90Pipeline, Bm192OnTheImageFits) {
  const sm90::SharedLayout l = sm90::sharedLayout(192, 128, /*stagedActivations=*/true);
  EXPECT_EQ(l.stages, 3);
  EXPECT_EQ(l.stageBytes(), 192 * 128 * 2 + 8192 + 512);
  EXPECT_LE(192 * sm90::kStagedRowBytes, l.barriersOffset());
  const sm90::SharedLayout ps = sm90::sharedLayout(192, 128, true, 0, /*persistent=*/true);
  EXPECT_EQ(ps.stages, 3);
  EXPECT_LE(ps.totalBytes(), sm90::kMaxSharedBytes);
  EXPECT_EQ(sm90::gemmWarpgroups(192), 2);
  // The image scratch covers whole 192-row tiles and whole pairs of blocks.
  EXPECT_EQ(sm90::activationImageScratchRows(2048), 2176); // 11 tiles: 2112 rows
  EXPECT_EQ(sm90::activationImageScratchRows(300), 512);   // pairs: 512; tiles: 384
  EXPECT_EQ(sm90::activationImageScratchRows(1), 256);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 192, kDefaultScaleRounding,
                                               Activation::None, {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(spec);
  CompiledKernel k;
  k.spec = *spec;
  EXPECT_EQ(k.geometry(2048).grid[0], 12u);
  EXPECT_EQ(k.geometry(2048).grid[1], 11u);
  EXPECT_EQ(k.geometry(2048).block[0], 256u);
  EXPECT_EQ(k.geometry(2048).sharedBytes, unsigned(l.totalBytes()));
  spec->persistent = true;
  ASSERT_OK(verifyKernelSpec(*spec));
  spec->stages = 4; // 4 stages and the output region exceed 227 KiB
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*spec), "stages must be 2..8 and fit");
  spec->persistent = false;
  ASSERT_OK(verifyKernelSpec(*spec));
  spec->stages = 0;
  spec->bk = 256;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*spec), "BM 192 takes BK 128");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 192),
                        "192 or 256 for gemm_qdqa4w4");
}

// The activation image is a permutation of whole 128-row blocks, and a
// BM-row tile's slab of one MMA step is BM x 32 contiguous bytes: K in
// steps of 16 per slab, each thread t's word in the core matrix of its row.
TEST(Sm90Pipeline, ActivationImageIsAPermutationWithContiguousSlabs) {
  const int64_t k = 256, m = 200; // two chunks, a partial second block
  const int64_t total = sm90::activationImageElements(m, k);
  ASSERT_EQ(total, 256 * k);
  std::vector<int> hits(size_t(total), 0);
  for (int64_t row = 0; row < 256; ++row)
    for (int64_t col = 0; col < k; ++col) {
      int64_t at = sm90::activationImageIndex(row, col, k);
      ASSERT_GE(at, 0);
      ASSERT_LT(at, total);
      ++hits[size_t(at)];
    }
  for (int h : hits)
    ASSERT_EQ(h, 1);
  // Block 1 starts after block 0's K/128 chunks of 8 slabs of 4 KiB.
  EXPECT_EQ(sm90::activationImageIndex(128, 0, k), (k / 128) * 8 * 4096 / 2);
  // Row r + 1 of a core matrix is 16 bytes on; thread t's word 4 bytes.
  EXPECT_EQ(sm90::activationImageIndex(1, 0, k) - sm90::activationImageIndex(0, 0, k), 8);
  EXPECT_EQ(sm90::activationImageIndex(0, 32, k) - sm90::activationImageIndex(0, 0, k), 2);
  // Element j + 4 is the high half of element j's word.
  EXPECT_EQ(sm90::activationImageIndex(0, 4, k) - sm90::activationImageIndex(0, 0, k), 1);
  // Token group 1 (rows 8..15) is 256 bytes into the slab.
  EXPECT_EQ(sm90::activationImageIndex(8, 0, k) - sm90::activationImageIndex(0, 0, k), 128);
  // K + 1 (h = 1) is the next core matrix (128 bytes), K + 2 the next slab.
  EXPECT_EQ(sm90::activationImageIndex(0, 1, k) - sm90::activationImageIndex(0, 0, k), 64);
  EXPECT_EQ(sm90::activationImageIndex(0, 2, k) - sm90::activationImageIndex(0, 0, k), 2048);
}
