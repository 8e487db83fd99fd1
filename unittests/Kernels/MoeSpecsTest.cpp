//===- MoeSpecsTest.cpp - The kernels of a MoE layer ----------------------===//
//
// makeMoeStageSpecs gives each stage's kernels in launch order with the
// padded row sizes; moe_gemm's rules; the padding function.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/MoeSpecs.h"
#include "TestUtil/Expected.h"

#include "gtest/gtest.h"

using namespace mxfp4;

namespace {

TEST(MoeSpecs, PaddedRows) {
  // sm_90a: multiples of its BN 128, at least two K steps.
  EXPECT_EQ(moePaddedRow(Arch::SM90A, 32), 256);
  EXPECT_EQ(moePaddedRow(Arch::SM90A, 256), 256);
  EXPECT_EQ(moePaddedRow(Arch::SM90A, 288), 384);
  EXPECT_EQ(moePaddedRow(Arch::SM90A, 2880), 2944);
  EXPECT_EQ(moePaddedRow(Arch::SM90A, 7168), 7168);
  // AMD: multiples of the 256-column N tile (and BK).
  for (Arch amd : {Arch::GFX950, Arch::GFX1250}) {
    EXPECT_EQ(moePaddedRow(amd, 32), 256);
    EXPECT_EQ(moePaddedRow(amd, 288), 512);
    EXPECT_EQ(moePaddedRow(amd, 2880), 3072);
    EXPECT_EQ(moePaddedRow(amd, 768), 768);
  }
}

TEST(MoeSpecs, StagesInLaunchOrder) {
  // Seed 002's layer at block_m 32.
  const MoeKernelShape s{896, 16, 3584, 768, 32, Activation::Situv2, ScaleRounding::Even};
  auto one = makeMoeStageSpecs(Arch::SM90A, 1, s);
  ASSERT_OK(one);
  ASSERT_EQ(one->size(), 3u);
  EXPECT_EQ((*one)[0].op, OpKind::MoeQuant);
  EXPECT_EQ((*one)[0].k, 3584);
  EXPECT_EQ((*one)[0].rounding, ScaleRounding::Even);
  EXPECT_EQ((*one)[1].op, OpKind::MoeGemm);
  EXPECT_EQ((*one)[1].n, 2 * 768);
  EXPECT_EQ((*one)[1].k, 3584);
  EXPECT_EQ((*one)[1].bm, 32);
  EXPECT_EQ((*one)[2].op, OpKind::MoeActQuant);
  EXPECT_EQ((*one)[2].activation, Activation::Situv2);
  auto two = makeMoeStageSpecs(Arch::SM90A, 2, s);
  ASSERT_OK(two);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].op, OpKind::MoeGemm);
  EXPECT_EQ((*two)[0].n, 3584);
  EXPECT_EQ((*two)[0].k, 768);
  EXPECT_EQ((*two)[1].op, OpKind::MoeReduce);
  EXPECT_EQ((*two)[1].n, 3584);
  EXPECT_EQ((*two)[1].k, 16);
  // GPT-OSS: 2880 padded to 2944 for the GEMMs, not for the SIMT kernels.
  const MoeKernelShape g{128, 4, 2880, 2880, 64, Activation::Swiglu, kDefaultScaleRounding};
  auto gpt = makeMoeStageSpecs(Arch::SM90A, 1, g);
  ASSERT_OK(gpt);
  EXPECT_EQ((*gpt)[0].k, 2880);
  EXPECT_EQ((*gpt)[1].n, 2 * 2944);
  EXPECT_EQ((*gpt)[1].k, 2944);
}

TEST(MoeSpecs, GemmRules) {
  // BM 128 takes BK 128 (two buffers of BM x BK in shared memory).
  auto big = makeMoeGemmSpec(Arch::SM90A, 1536, 7168, 128);
  ASSERT_OK(big);
  EXPECT_EQ(big->bk, 128);
  EXPECT_ERROR_CONTAINS(makeMoeGemmSpec(Arch::SM90A, 1536, 7168, 24), "BM must be");
  EXPECT_ERROR_CONTAINS(makeMoeGemmSpec(Arch::SM90A, 1000, 7168, 32), "");
  // AMD: block_m up to TargetInfo::maxMoeBlockM, the dense N tile.
  for (Arch amd : {Arch::GFX950, Arch::GFX1250})
    for (int64_t bm : {16, 32, 64}) {
      auto spec = makeMoeGemmSpec(amd, 1536, 7168, bm);
      ASSERT_OK(spec);
      EXPECT_EQ(spec->bn, targetInfo(amd).defaultBn);
      EXPECT_EQ(spec->bm * spec->bk <= 128 * 128, true);
    }
  EXPECT_ERROR_CONTAINS(makeMoeGemmSpec(Arch::GFX950, 1536, 7168, 128),
                        "moe_gemm on gfx950: BM (block_m) must be 16, 32 or 64, got 128");
  KernelSpec s = *big;
  s.activation = Activation::Silu;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(s), "no activation");
  s = *big;
  s.splitK = 2;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(s), "one K split");
  EXPECT_ERROR_CONTAINS(makeMoeStageSpecs(Arch::SM90A, 3, {}), "stage is 1 or 2");
}

} // namespace
