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
  // Every target: the activation in moe_gemm's epilogue.
  for (Arch arch : {Arch::SM90A, Arch::GFX950, Arch::GFX1250}) {
    auto fused = makeMoeStageSpecs(arch, 1, s);
    ASSERT_OK(fused);
    ASSERT_EQ(fused->size(), 2u);
    EXPECT_EQ((*fused)[0].op, OpKind::MoeQuant);
    EXPECT_EQ((*fused)[1].op, OpKind::MoeGemm);
    EXPECT_EQ((*fused)[1].epilogue, Epilogue::ActMx);
    EXPECT_EQ((*fused)[1].activation, Activation::Situv2);
    EXPECT_EQ((*fused)[1].rounding, ScaleRounding::Even);
    EXPECT_EQ((*fused)[1].n, 2 * 768);
  }
  // Unfused on request: moe_gemm stores bf16, moe_actq quantizes the
  // activation.
  MoeKernelShape unfused = s;
  unfused.fuseActivation = false;
  for (Arch arch : {Arch::SM90A, Arch::GFX950}) {
    auto one = makeMoeStageSpecs(arch, 1, unfused);
    ASSERT_OK(one);
    ASSERT_EQ(one->size(), 3u);
    EXPECT_EQ((*one)[0].op, OpKind::MoeQuant);
    EXPECT_EQ((*one)[0].k, 3584);
    EXPECT_EQ((*one)[0].rounding, ScaleRounding::Even);
    EXPECT_EQ((*one)[1].op, OpKind::MoeGemm);
    EXPECT_EQ((*one)[1].epilogue, Epilogue::BF16);
    EXPECT_EQ((*one)[1].n, 2 * 768);
    EXPECT_EQ((*one)[1].k, 3584);
    EXPECT_EQ((*one)[1].bm, 32);
    EXPECT_EQ((*one)[2].op, OpKind::MoeActQuant);
    EXPECT_EQ((*one)[2].activation, Activation::Situv2);
  }
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
  // Scales below 128 fold into one multiply where the GEMM dequantizes
  // (sm_90a); AMD's scaled MMA takes them as they are.
  EXPECT_FALSE(big->foldedScales);
  EXPECT_TRUE(makeMoeGemmSpec(Arch::SM90A, 1536, 7168, 16, 0, true)->foldedScales);
  EXPECT_FALSE(makeMoeGemmSpec(Arch::GFX950, 1536, 7168, 16, 0, true)->foldedScales);
  EXPECT_TRUE((*makeMoeStageSpecs(
      Arch::SM90A, 1, {896, 16, 3584, 768, 32, Activation::Situv2, kDefaultScaleRounding}))[1]
                  .foldedScales);
  s = *big;
  s.splitK = 2;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(s), "moe_gemm splits K on sm_90a below BM 128");
  EXPECT_ERROR_CONTAINS(makeMoeStageSpecs(Arch::SM90A, 3, {}), "stage is 1 or 2");
}

TEST(MoeSpecs, FusedEpilogueRules) {
  const MoeKernelShape s{128, 4, 2880, 2880, 16, Activation::Swiglu, ScaleRounding::Floor, 1};
  auto fused = makeMoeStage1FusedSpec(Arch::SM90A, s);
  ASSERT_OK(fused);
  EXPECT_GT(fused->splitK, 1); // one token: few blocks, K split, summed before the epilogue
  // The name says the epilogue and parses back; the parameters are
  // run-time arguments (0 in the name).
  EXPECT_NE(fused->name().find("_aswiglu_f00000000_f00000000_eactmx"), std::string::npos)
      << fused->name();
  auto parsed = parseKernelName(fused->name());
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->name(), fused->name());
  auto debug = makeMoeStage1FusedSpec(Arch::SM90A, s, /*debug=*/true);
  ASSERT_OK(debug);
  EXPECT_EQ(debug->epilogue, Epilogue::ActMxDebug);
  EXPECT_EQ(parseKernelName(debug->name())->epilogue, Epilogue::ActMxDebug);
  // AMD has it too (without a K split); only moe_gemm has it, with a
  // gated activation and no compiled-in parameters.
  for (Arch amd : {Arch::GFX950, Arch::GFX1250}) {
    auto onAmd = makeMoeStage1FusedSpec(amd, s);
    ASSERT_OK(onAmd);
    EXPECT_EQ(onAmd->splitK, 1);
    EXPECT_EQ(parseKernelName(onAmd->name())->name(), onAmd->name());
  }
  KernelSpec k = *fused;
  k.activation = Activation::None;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "with a gated activation");
  k = *fused;
  k.activationParams = {1.702f, 7.0f};
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "run-time arguments");
  k = *makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 16);
  k.epilogue = Epilogue::ActMx;
  k.activation = Activation::Silu;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "got gemm_a4w4 on sm_90a");
}

// The MoE intermediates' scales: gfx1250 keeps them in the sorted-row
// layout of its WMMA with quant_wmma_rep = block_m / 16 (seed 002), every
// kernel that writes or reads them alike; row-major elsewhere.
TEST(MoeSpecs, ScaleLayoutPerTarget) {
  for (auto [bm, rep] : {std::pair<int64_t, int64_t>{16, 1}, {32, 2}, {64, 4}, {128, 8}}) {
    EXPECT_EQ(moeScaleRep(Arch::GFX1250, bm), rep);
    EXPECT_EQ(moeScaleRep(Arch::GFX950, bm), 1);
    EXPECT_EQ(moeScaleRep(Arch::SM90A, bm), 1);
  }
  EXPECT_EQ(moeScaleRep(Arch::GFX1250, 48), 1);
  for (int64_t bm : {16, 32, 64}) {
    MoeKernelShape s{896, 16, 3584, 768, bm, Activation::Situv2, kDefaultScaleRounding};
    for (bool fuse : {true, false}) {
      s.fuseActivation = fuse;
      for (int stage : {1, 2}) {
        auto specs = makeMoeStageSpecs(Arch::GFX1250, stage, s);
        ASSERT_OK(specs);
        for (const KernelSpec &k : *specs) {
          const bool carries =
              k.op == OpKind::MoeQuant || k.op == OpKind::MoeActQuant || k.op == OpKind::MoeGemm;
          EXPECT_EQ(k.moeScaleRep, carries ? bm / 16 : 1) << k.name();
          EXPECT_EQ(parseKernelName(k.name())->name(), k.name());
          if (bm > 16 && carries)
            EXPECT_NE(k.name().find(strCat("_xr", bm / 16)), std::string::npos) << k.name();
        }
      }
    }
  }
  // The layout is gfx1250's, on the kernels of the intermediates, with
  // whole layout tiles per row block.
  auto gemm = makeMoeGemmSpec(Arch::GFX1250, 1536, 3584, 64);
  ASSERT_OK(gemm);
  EXPECT_EQ(gemm->name().substr(gemm->name().size() - 10), "_ebf16_xr4");
  KernelSpec k = *gemm;
  k.bm = 32;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "whole tiles of 16 R = 64 rows");
  k = *gemm;
  k.moeScaleRep = 3;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "R = 2, 4 or 8");
  EXPECT_ERROR_CONTAINS(makeMoeQuantSpec(Arch::SM90A, 3584, kDefaultScaleRounding, 4),
                        "is gfx1250's, for moe_quant, moe_actq and moe_gemm; got moe_quant on "
                        "sm_90a");
  EXPECT_ERROR_CONTAINS(makeMoeQuantSpec(Arch::GFX950, 3584, kDefaultScaleRounding, 2),
                        "got moe_quant on gfx950");
  KernelSpec reduce = *makeMoeReduceSpec(Arch::GFX1250, 3584, 16);
  reduce.moeScaleRep = 4;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(reduce), "got moe_reduce on gfx1250");
  // The name: no field for row-major, so "_xr1" is not canonical.
  std::string name = gemm->name();
  EXPECT_ERROR_CONTAINS(parseKernelName(name.substr(0, name.size() - 1) + "1"), "not '_xr1'");
  EXPECT_ERROR_CONTAINS(parseKernelName(name.substr(0, name.size() - 1) + "04"), "'xr<number>'");
}

TEST(MoeSpecs, AtomicStage2Rules) {
  // sm_90a: moe_gemm with the scatter epilogue, then moe_cast; its name
  // round-trips; its K splits stay (they add on their own).
  MoeKernelShape s{896, 16, 3584, 768, 16, Activation::Situv2, kDefaultScaleRounding, 1};
  s.atomicStage2 = true;
  auto two = makeMoeStageSpecs(Arch::SM90A, 2, s);
  ASSERT_OK(two);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].op, OpKind::MoeGemm);
  EXPECT_EQ((*two)[0].epilogue, Epilogue::Scatter);
  EXPECT_EQ((*two)[0].n, 3584);
  EXPECT_EQ((*two)[0].k, 768);
  EXPECT_EQ((*two)[1].op, OpKind::MoeCast);
  EXPECT_EQ((*two)[1].n, 3584);
  EXPECT_EQ((*two)[1].k, 0);
  for (const KernelSpec &k : *two) {
    auto parsed = parseKernelName(k.name());
    ASSERT_OK(parsed);
    EXPECT_EQ(parsed->name(), k.name());
  }
  EXPECT_NE((*two)[0].name().find("_escatter"), std::string::npos);
  auto plain = makeMoeGemmSpec(Arch::SM90A, 3584, 768, 16, moeExpectedBlocks(1, 16, 896, 16));
  ASSERT_OK(plain);
  EXPECT_EQ((*two)[0].splitK, plain->splitK);
  // AMD has it too (with no K split there).
  for (Arch amd : {Arch::GFX950, Arch::GFX1250}) {
    auto onAmd = makeMoeStageSpecs(amd, 2, s);
    ASSERT_OK(onAmd);
    ASSERT_EQ(onAmd->size(), 2u);
    EXPECT_EQ((*onAmd)[0].epilogue, Epilogue::Scatter);
    EXPECT_EQ((*onAmd)[0].splitK, 1);
    EXPECT_EQ((*onAmd)[1].op, OpKind::MoeCast);
    EXPECT_EQ(parseKernelName((*onAmd)[0].name())->name(), (*onAmd)[0].name());
  }
  // Only moe_gemm scatters, with no activation; moe_cast sums nothing.
  KernelSpec k = *makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 16);
  k.epilogue = Epilogue::Scatter;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k),
                        "the scatter epilogue (escatter: weighted rows added atomically to "
                        "their tokens' f32 rows) is moe_gemm's, with no activation; got "
                        "gemm_a4w4 on sm_90a");
  k = (*two)[0];
  k.activation = Activation::Silu;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "with no activation");
  k = (*two)[1];
  k.k = 4;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(k), "moe_cast: sums nothing: K must be 0, got 4");
  EXPECT_ERROR_CONTAINS(makeMoeCastSpec(Arch::SM90A, 100), "multiple of 8");
}

TEST(MoeSpecs, SplitsKWhenFewBlocks) {
  // Evenly spread routings: the active experts, their rows in blocks.
  EXPECT_EQ(moeExpectedBlocks(1, 16, 896, 16), 16);
  EXPECT_EQ(moeExpectedBlocks(128, 16, 896, 16), 896);
  EXPECT_EQ(moeExpectedBlocks(4096, 16, 896, 64), 896 * 2);
  EXPECT_EQ(moeExpectedBlocks(0, 16, 896, 16), 0);
  // The K splits of a layer's two moe_gemm launches (W1, W2) on sm_90a.
  auto splits = [](const MoeKernelShape &s) {
    auto one = makeMoeStageSpecs(Arch::SM90A, 1, s), two = makeMoeStageSpecs(Arch::SM90A, 2, s);
    EXPECT_TRUE(one && two);
    return one && two ? std::make_pair((*one)[1].splitK, (*two)[0].splitK)
                      : std::make_pair(int64_t(0), int64_t(0));
  };
  // Kimi-K3 at one token: 16 blocks x 12 N tiles of W1 are 192 workgroups,
  // under sm_90a's 264: two splits. W2's 16 x 28 tiles need none.
  EXPECT_EQ(splits({896, 16, 3584, 768, 16, Activation::Situv2, kDefaultScaleRounding, 1}),
            std::make_pair(int64_t(2), int64_t(1)));
  // DeepSeek-R1 at TP 8, one token: 8 blocks x 4 tiles; 8 splits of the
  // 56 K steps. W2's K (256) is two steps: no split.
  EXPECT_EQ(splits({256, 8, 7168, 256, 16, Activation::Silu, kDefaultScaleRounding, 1}),
            std::make_pair(int64_t(8), int64_t(1)));
  // Every split keeps two K steps: 8 steps give at most 4.
  auto few = makeMoeGemmSpec(Arch::SM90A, 256, 1024, 16, 1);
  ASSERT_OK(few);
  EXPECT_EQ(few->splitK, 4);
  // Many blocks, unknown blocks, BM 128 and AMD: one split.
  EXPECT_EQ(makeMoeGemmSpec(Arch::SM90A, 1536, 3584, 16, 896)->splitK, 1);
  EXPECT_EQ(makeMoeGemmSpec(Arch::SM90A, 1536, 3584, 16, 0)->splitK, 1);
  EXPECT_EQ(makeMoeGemmSpec(Arch::SM90A, 1536, 3584, 128, 1)->splitK, 1);
  for (Arch amd : {Arch::GFX950, Arch::GFX1250})
    EXPECT_EQ(makeMoeGemmSpec(amd, 1536, 3584, 16, 1)->splitK, 1);
  // The split is part of the kernel's name.
  EXPECT_NE(makeMoeGemmSpec(Arch::SM90A, 2 * 768, 3584, 16, 16)->name(),
            makeMoeGemmSpec(Arch::SM90A, 2 * 768, 3584, 16)->name());
}

} // namespace
