//===- KernelNameTest.cpp - Canonical kernel names --------------------------===//
//
// Names round-trip exactly, and parsing untrusted text (truncations, random
// mutations, junk) never crashes: it yields the same name back or an error.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"
#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/MoeSpecs.h"
#include "mxfp4/Kernels/Sm90Geometry.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

#include "gtest/gtest.h"

using namespace mxfp4;

namespace {

/// A random valid spec of any op and target.
KernelSpec randomSpec(std::mt19937_64 &rng) {
  int64_t n = 256 * int64_t(1 + rng() % 64), k = 256 * int64_t(1 + rng() % 40);
  ScaleRounding r = allScaleRoundings()[rng() % 4];
  Activation act = rng() % 2 ? Activation::Silu : Activation::None;
  int64_t smBm = int64_t(8) << (rng() % 4);
  Expected<KernelSpec> s = makeError("unreached");
  switch (rng() % 7) {
  case 0:
    s = makeGemmA4W4Spec(rng() % 2 ? Arch::GFX950 : Arch::GFX1250, n, k, rng() % 2 ? 16 : 64, r,
                         act);
    break;
  case 1:
    s = makeGemmA4W4Spec(Arch::SM90A, n, k, smBm, r, act);
    if (s)
      s->foldedScales = rng() % 2;
    break;
  case 2:
    s = makeGemmA4W4Spec(Arch::SM90A, n, k, smBm, r, act, {0.0f, 0.0f}, OpKind::GemmMxA4W4);
    if (s) {
      s->foldedScales = rng() % 2;
      s->stages = int64_t(rng() % 3) + (rng() % 2 ? 0 : 2); // 0..4: 2 and 3 always fit
      if (s->stages == 1)
        s->stages = 0;
    }
    break;
  case 3:
    s = makeQuantizeMxSpec(Arch::SM90A, k, smBm, r);
    break;
  case 4:
    // gfx1250's carries its MoE scale layout (_xr<R>) from BM 32.
    s = rng() % 2 ? makeMoeGemmSpec(Arch::SM90A, n, k, smBm)
                  : makeMoeGemmSpec(Arch::GFX1250, n, k, int64_t(16) << (rng() % 3));
    break;
  case 5: {
    const Arch arches[] = {Arch::GFX950, Arch::GFX1250, Arch::SM90A};
    const Arch a = arches[rng() % 3];
    const Activation gated[] = {Activation::Silu, Activation::Swiglu, Activation::Situv2};
    switch (rng() % 3) {
    case 0:
      s = makeMoeQuantSpec(a, 32 * int64_t(1 + rng() % 300), r);
      break;
    case 1:
      s = makeMoeActQuantSpec(a, 32 * int64_t(1 + rng() % 300), gated[rng() % 3], r);
      break;
    default:
      s = makeMoeReduceSpec(a, 8 * int64_t(1 + rng() % 1000), 1 + int64_t(rng() % 255));
      break;
    }
    break;
  }
  default: {
    const Arch arches[] = {Arch::GFX950, Arch::GFX1250, Arch::SM90A};
    auto sort = makeMoeSortSpecs(arches[rng() % 3], 1 + int64_t(rng() % 1024),
                                 1 + int64_t(rng() % 32), 1 + int64_t(rng() % 256));
    s = sort ? Expected<KernelSpec>((*sort)[rng() % 2]) : Expected<KernelSpec>(sort.takeError());
    break;
  }
  }
  EXPECT_TRUE(bool(s)) << s.takeError().message();
  return s ? *s : KernelSpec();
}

TEST(KernelName, Canonical) {
  auto s = makeGemmA4W4Spec(Arch::GFX950, 8448, 7168, 16);
  ASSERT_OK(s);
  EXPECT_EQ(s->name(), "gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_"
                       "sgfx950mfma16_anone_ebf16");
  KernelSpec sw = *s;
  sw.activation = Activation::Swiglu;
  sw.activationParams = {1.702f, 7.0f};
  EXPECT_NE(sw.name().find("_aswiglu_f3fd9db23_f40e00000_ebf16"), std::string::npos) << sw.name();
  // The dense GEMM cannot take a gated activation: the name parses, the spec does not verify.
  EXPECT_ERROR_CONTAINS(parseKernelName(sw.name()), "needs gate and up tiles");
}

TEST(KernelName, RandomSpecsRoundTrip) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    KernelSpec s = randomSpec(rng);
    std::string name = s.name();
    for (char c : name)
      ASSERT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << name;
    auto back = parseKernelName(name);
    ASSERT_OK(back);
    ASSERT_EQ(back->name(), name);
    ASSERT_EQ(back->op, s.op);
    ASSERT_EQ(back->n, s.n);
    ASSERT_EQ(back->k, s.k);
    ASSERT_EQ(back->bm, s.bm);
    ASSERT_EQ(back->bk, s.bk);
    ASSERT_EQ(back->arch, s.arch);
    ASSERT_EQ(back->rounding, s.rounding);
    ASSERT_EQ(back->activation, s.activation);
    ASSERT_EQ(back->scaleLayout, s.scaleLayout);
  }
}

TEST(KernelName, MalformedNamesSayWhatIsWrong) {
  const std::string good =
      "gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_"
      "sgfx950mfma16_anone_ebf16";
  struct Case {
    std::string name, error;
  } cases[] = {
      {"", "is empty"},
      {"GEMM", "outside [a-z0-9_]"},
      {"gemm_a4w4_gfx950_n8448/../../etc", "outside [a-z0-9_]"},
      {"gemm_a8w8_gfx950", "unknown op"},
      {"gemm_a4w4_gfx942_n1", "unknown target 'gfx942'"},
      {"gemm_a4w4_gfx950_n08448", "expected 'n<number>' at field 4, got 'n08448'"},
      {"gemm_a4w4_gfx950_n99999999999", "expected 'n<number>'"},
      {"gemm_a4w4_gfx950_n8448_k", "expected 'k<number>'"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1",
       "ends early; expected the scale rounding"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ceil", "expected 'ks<number>' at field 9"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_ceil", "unknown scale rounding 'ceil'"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks17_roundup_wgfx950mfma16_sgfx950mfma16_"
       "anone_ebf16",
       "split-K takes 2 to 16 splits and at most one per K step (28), got 17"},
      {"gemm_a4w4_gfx950_n256_k512_bm16_bn256_bk256_ks3_roundup_wgfx950mfma16_sgfx950mfma16_"
       "anone_ebf16",
       "at most one per K step (2), got 3"},
      {"gemm_a4w4_sm90a_n8448_k7168_bm8_bn128_bk128_ks29_roundup_wsm90mma16_ssm90mma16_anone_ebf16",
       "split-K 29 must leave at least 2 of the 56 K steps to every split"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wx", "unknown weight layout 'x'"},
      {good + "_extra", "trailing fields"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx950mfma16_"
       "aswiglu_f3fd9db2_f40e00000_ebf16",
       "is not 8 lower-case hex digits"},
      {"gemm_a4w4_gfx950_n1000_k7100_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx950mfma16_"
       "anone_"
       "ebf16",
       "K % 32 == 0"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx1250wmma_anone_"
       "ebf16",
       "gfx950-mfma16 layout"},
      {"gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx950mfma16_"
       "anone_"
       "efp4",
       "unknown epilogue 'fp4'"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR_CONTAINS(parseKernelName(c.name), c.error);
  ASSERT_OK(parseKernelName(good));
}

TEST(KernelName, QuantizerAndPreQuantizedGemm) {
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_EQ(q->name(), "quant_mxfp4_sm90a_n0_k7168_bm64_bn128_bk128_ks1_roundup_wrowmajor_"
                       "srowmajor_anone_ebf16");
  auto g = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 64, kDefaultScaleRounding, Activation::None,
                            {0.0f, 0.0f}, OpKind::GemmMxA4W4);
  ASSERT_OK(g);
  EXPECT_EQ(g->name().rfind("gemm_mxa4w4_sm90a_n8448_k7168_bm64_", 0), 0u) << g->name();
  EXPECT_ERROR_CONTAINS(makeQuantizeMxSpec(Arch::GFX950, 7168, 64), "implemented for sm_90a only");
  EXPECT_ERROR_CONTAINS(makeQuantizeMxSpec(Arch::SM90A, 7168, 24), "BM must be 8, 16, 32 or 64");
  EXPECT_ERROR_CONTAINS(makeQuantizeMxSpec(Arch::SM90A, 100, 64), "divide K = 100");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::GFX950, 8448, 7168, 16, kDefaultScaleRounding,
                                         Activation::None, {0.0f, 0.0f}, OpKind::GemmMxA4W4),
                        "implemented for sm_90a only");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 16, kDefaultScaleRounding,
                                         Activation::None, {0.0f, 0.0f}, OpKind::QuantizeMx),
                        "not a GEMM");
  EXPECT_ERROR_CONTAINS(parseKernelName("quant_mxfp4_sm90a_n256_k7168_bm64_bn128_bk128_ks1_roundup_"
                                        "wrowmajor_srowmajor_anone_ebf16"),
                        "N must be 0");
  EXPECT_ERROR_CONTAINS(
      parseKernelName("gemm_mxa4w4_sm90a_n8448_k7168_bm64_bn128_bk128_ks1_roundup_"
                      "wsm90mma16_ssm90mma16_anone_ebf16dq"),
      "the quantization dump (epilogue bf16dq) does not apply");
  EXPECT_ERROR_CONTAINS(parseKernelName("quant_fp8_sm90a"), "unknown op");
}

TEST(KernelName, MoeSort) {
  auto specs = makeMoeSortSpecs(Arch::SM90A, 896, 16, 32);
  ASSERT_OK(specs);
  EXPECT_EQ((*specs)[0].name(), "moe_count_sm90a_n896_k16_bm32_bn256_bk16_ks1_roundup_wrowmajor_"
                                "srowmajor_anone_ebf16");
  EXPECT_EQ((*specs)[1].name().rfind("moe_place_sm90a_n896_k16_bm32_", 0), 0u);
  for (Arch a : {Arch::GFX950, Arch::GFX1250})
    EXPECT_TRUE(bool(makeMoeSortSpecs(a, 257, 9, 16)));
  EXPECT_ERROR_CONTAINS(makeMoeSortSpecs(Arch::SM90A, 0, 16, 32), "number of experts");
  EXPECT_ERROR_CONTAINS(makeMoeSortSpecs(Arch::SM90A, 896, 256, 32), "K is topk");
  EXPECT_ERROR_CONTAINS(makeMoeSortSpecs(Arch::SM90A, 896, 16, 512), "block_m");
  EXPECT_ERROR_CONTAINS(parseKernelName("moe_count_sm90a_n896_k16_bm32_bn128_bk16_ks1_roundup_"
                                        "wrowmajor_srowmajor_anone_ebf16"),
                        "256 threads");
  EXPECT_ERROR_CONTAINS(parseKernelName("moe_place_gfx950_n896_k16_bm32_bn256_bk16_ks1_roundup_"
                                        "wrowmajor_srowmajor_anone_ebf16_dec"),
                        "no GEMM variant");
  EXPECT_ERROR_CONTAINS(parseKernelName("moe_place_gfx950_n896_k16_bm32_bn256_bk16_ks1_even_"
                                        "wrowmajor_srowmajor_anone_ebf16"),
                        "rounding must be the default");
}

// sm_90a GEMMs on weights whose scales are all below 128 fold the 2^126 of
// the dequantization into the scale: a trailing "_fold", sm_90a GEMMs only.
TEST(KernelName, FoldedScales) {
  auto g = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 16);
  ASSERT_OK(g);
  g->foldedScales = true;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 11), "_ebf16_fold") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->foldedScales);
  EXPECT_EQ(back->name(), name);
  g->foldedScales = false;
  EXPECT_EQ(g->name() + "_fold", name);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_fold"), "trailing fields after 'fold': 'fold'");
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_folded"), "only 'fold', then 'st<N>'");
  auto amd = makeGemmA4W4Spec(Arch::GFX950, 8448, 7168, 16);
  ASSERT_OK(amd);
  EXPECT_ERROR_CONTAINS(parseKernelName(amd->name() + "_fold"), "sm_90a GEMM variant");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_fold"), "no weight scales to fold");
}

TEST(KernelName, StageCount) {
  // An sm_90a GEMM's stage count is part of its name ("_st<N>" after
  // "_fold") and round-trips; counts that do not fit shared memory, other
  // targets and the quantizers are rejected.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 7168, 768, 128, kDefaultScaleRounding, Activation::None,
                            {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->foldedScales = true;
  g->stages = 2;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 9), "_fold_st2") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_EQ(back->stages, 2);
  EXPECT_TRUE(back->foldedScales);
  EXPECT_EQ(back->name(), name);
  g->foldedScales = false;
  auto unfolded = parseKernelName(g->name());
  ASSERT_OK(unfolded);
  EXPECT_EQ(unfolded->stages, 2);
  EXPECT_FALSE(unfolded->foldedScales);
  g->foldedScales = true;
  g->stages = 0;
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_st2_fold"), "only 'fold', then 'st<N>'");
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_st02"), "only 'fold', then 'st<N>'");
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_st"), "only 'fold', then 'st<N>'");
  // Six stages of 40.5 KiB exceed the 227 KiB a workgroup may take.
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_st6"), "stages must be 2..8 and fit 227 KiB");
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_st1"), "stages must be 2..8");
  auto amd = makeGemmA4W4Spec(Arch::GFX950, 8448, 7168, 16);
  ASSERT_OK(amd);
  EXPECT_ERROR_CONTAINS(parseKernelName(amd->name() + "_st3"), "sm_90a GEMM variant");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_st3"), "no K pipeline");
}

TEST(KernelName, TwoWarpgroups) {
  // gemm_qdqa4w4 below BM 128 may take two warpgroups ("_wg2", last); no
  // other kernel can.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 32, kDefaultScaleRounding, Activation::None,
                            {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->foldedScales = true;
  g->stages = 3;
  g->twoWarpgroups = true;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 13), "_fold_st3_wg2") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->twoWarpgroups);
  EXPECT_EQ(back->name(), name);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_fold"), "trailing fields after 'wg2'");
  g->twoWarpgroups = false;
  g->bm = 128;
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "_wg2"), "below BM 128");
  auto inl = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 32);
  ASSERT_OK(inl);
  EXPECT_ERROR_CONTAINS(parseKernelName(inl->name() + "_wg2"), "not of gemm_a4w4");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_wg2"), "no MMA warpgroups");
}

TEST(KernelName, Persistent) {
  // gemm_qdqa4w4 without split-K may run as a persistent grid ("_ps", last);
  // it needs K steps for the look-ahead of its stages and room for its
  // output tile next to them.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 7168, 768, 128, kDefaultScaleRounding,
                            Activation::None, {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->foldedScales = true;
  g->stages = 3;
  g->persistent = true;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 12), "_fold_st3_ps") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->persistent);
  EXPECT_EQ(back->name(), name);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_fold"), "trailing fields after 'ps'");
  g->stages = 5; // 5 x 40.5 KiB of stages and the 34 KiB output tile
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "stages must be 2..8 and fit");
  g->stages = 0;
  g->k = 256; // 2 steps, 4 stages
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "needs at least 3 K steps");
  g->k = 768;
  g->splitK = 2;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "without split-K");
  auto inl = makeGemmA4W4Spec(Arch::SM90A, 7168, 768, 128);
  ASSERT_OK(inl);
  EXPECT_ERROR_CONTAINS(parseKernelName(inl->name() + "_ps"), "not of gemm_a4w4");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_ps"), "no tile loop");
}

TEST(KernelName, Decode) {
  // gemm_a4w4 (inline quantization) below BM 128 has a decode variant
  // ("_dec", after "_wg2"): every split takes the same K steps, and their
  // activations all stay in shared memory.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8);
  ASSERT_OK(g);
  g->foldedScales = true;
  g->splitK = 8;
  g->decode = true;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 9), "_fold_dec") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->decode);
  EXPECT_EQ(back->name(), name);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_wg2"), "trailing fields after 'dec'");
  EXPECT_EQ(sm90StepsPerWorkgroup(*g), 7);
  g->splitK = 6; // 56 steps do not split evenly
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "must be a multiple of BK x split-K = 768");
  g->splitK = 1; // 56 steps of 2 KiB: fits
  ASSERT_OK(verifyKernelSpec(*g));
  g->bm = 64; // 56 steps of 16 KiB: does not
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "keeps every K step's activations");
  g->bm = 128;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "below BM 128");
  auto image = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8, kDefaultScaleRounding, Activation::None,
                                {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(image);
  EXPECT_ERROR_CONTAINS(parseKernelName(image->name() + "_dec"), "not of gemm_qdqa4w4");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_dec"), "no K loop");
}

TEST(KernelName, DecodeGroups) {
  // The decode variant with G warpgroups splitting K ("_dec<G>", G > 1):
  // each takes an equal share of the split's K steps, at least two.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8);
  ASSERT_OK(g);
  g->bn = 64;
  g->bk = 128;
  g->splitK = 7; // 8 steps a split
  g->decode = true;
  g->decodeGroups = 2;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 5), "_dec2") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->decode);
  EXPECT_EQ(back->decodeGroups, 2);
  EXPECT_EQ(back->name(), name);
  EXPECT_EQ(sm90WorkgroupThreads(*g), 256);
  g->decodeGroups = 4; // 2 steps each
  ASSERT_OK(verifyKernelSpec(*g));
  EXPECT_EQ(sm90WorkgroupThreads(*g), 512);
  g->splitK = 14; // 4 steps: 1 each
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "a multiple of 4 and at least 8");
  g->splitK = 8; // 7 steps
  g->decodeGroups = 3;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "a multiple of 3 and at least 6");
  g->splitK = 1;
  g->bk = 256; // 28 steps
  g->decodeGroups = 4;
  ASSERT_OK(verifyKernelSpec(*g));
  g->bk = 128;
  g->decodeGroups = 5;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "takes 1 to 4 warpgroups");
  g->decodeGroups = 2;
  g->decode = false;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "without it");
  // "_dec1" is spelled "_dec"; a group count is canonical and after "dec".
  g->decode = true;
  g->decodeGroups = 1;
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "1"), "trailing fields");
  EXPECT_ERROR_CONTAINS(parseKernelName(g->name() + "02"), "trailing fields");
}

TEST(KernelName, WarpSplitK) {
  // gemm_a4w4 (inline quantization) at BM 8, BN 16 or 32 has a warp-split
  // variant ("_wk<W>", after where "_dec" would be): W warps of one
  // workgroup split K, each at least one 128-K chunk; no split-K.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8);
  ASSERT_OK(g);
  g->bn = 32;
  g->foldedScales = true;
  g->warpSplitK = 8;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 9), "_fold_wk8") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_EQ(back->warpSplitK, 8);
  EXPECT_EQ(back->name(), name);
  EXPECT_EQ(sm90WorkgroupThreads(*g), 256);
  EXPECT_EQ(sm90SharedLayout(*g).totalBytes(), 8 * 32 * 8 * 4);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_wg2"), "trailing fields after 'wk8'");
  EXPECT_ERROR_CONTAINS(parseKernelName(name.substr(0, name.size() - 1) + "08"), "trailing fields");
  g->warpSplitK = 17; // at most 16
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "1 to 16 warps");
  g->warpSplitK = 16;
  ASSERT_OK(verifyKernelSpec(*g));
  g->k = 1920; // 15 chunks
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "K = 1920 has 15 chunks, got 16 warps");
  g->k = 7168;
  g->bn = 64;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "BN 16 or 32");
  g->bn = 16;
  g->splitK = 2;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "without split-K");
  g->splitK = 1;
  g->bm = 16;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "at BM 8");
  g->bm = 8;
  g->warpSplitK = 0; // BN 16 is the warp-split variant's only
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "BN must be 128 or 64");
  auto image = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8, kDefaultScaleRounding, Activation::None,
                                {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(image);
  image->bn = 32;
  image->warpSplitK = 4;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*image), "got gemm_qdqa4w4");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_wk4"), "no K loop");
}

TEST(KernelName, StreamK) {
  // gemm_qdqa4w4 of BM 128 or 256 without split-K may run stream-K ("_sk",
  // last, instead of "_ps"); it sums partial tiles, so no activation.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 7168, 4224, 256, kDefaultScaleRounding,
                            Activation::None, {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->foldedScales = true;
  g->streamK = true;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 8), "_fold_sk") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_TRUE(back->streamK);
  EXPECT_FALSE(back->persistent);
  EXPECT_EQ(back->name(), name);
  EXPECT_ERROR_CONTAINS(parseKernelName(name + "_ps"), "trailing fields after 'sk'");
  g->persistent = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "a persistent grid (_ps) and stream-K (_sk) exclude");
  g->persistent = false;
  g->splitK = 2;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "split-K 2");
  g->splitK = 1;
  g->bm = 64;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "with BM 64");
  g->bm = 128;
  g->activation = Activation::Silu;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "an activation");
  auto inl = makeGemmA4W4Spec(Arch::SM90A, 7168, 768, 128);
  ASSERT_OK(inl);
  EXPECT_ERROR_CONTAINS(parseKernelName(inl->name() + "_sk"), "not of gemm_a4w4");
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 64);
  ASSERT_OK(q);
  EXPECT_ERROR_CONTAINS(parseKernelName(q->name() + "_sk"), "no tile loop");
}

TEST(KernelName, ImageStream) {
  // The streamed image ("_is<N>", after where "_wk" would be): on
  // qdq_mxfp4 the GEMM's split count (it must split K's 128-K steps
  // evenly), on gemm_qdqa4w4 at BM 128 the quantizer's rows per piece.
  auto q = makeQuantizeMxSpec(Arch::SM90A, 7168, 32, kDefaultScaleRounding, OpKind::QdqMx);
  ASSERT_OK(q);
  q->imageStream = 2;
  const std::string qName = q->name();
  EXPECT_EQ(qName.substr(qName.size() - 4), "_is2") << qName;
  auto qBack = parseKernelName(qName);
  ASSERT_OK(qBack);
  EXPECT_EQ(qBack->imageStream, 2);
  EXPECT_EQ(qBack->name(), qName);
  EXPECT_ERROR_CONTAINS(parseKernelName(qName + "_is2"), "trailing fields after 'is2'");
  q->imageStream = 3; // 56 steps
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*q), "K / 128 = 56");
  q->imageStream = 4;
  ASSERT_OK(verifyKernelSpec(*q));
  q->bm = 64; // stages its block for bulk copies
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*q), "BM 8, 16 or 32");
  auto quant = makeQuantizeMxSpec(Arch::SM90A, 7168, 32);
  ASSERT_OK(quant);
  quant->imageStream = 1;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*quant), "got quant_mxfp4");

  auto g = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 128, kDefaultScaleRounding, Activation::None,
                            {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->splitK = 2;
  g->foldedScales = true;
  g->imageStream = 32;
  const std::string name = g->name();
  EXPECT_EQ(name.substr(name.size() - 10), "_fold_is32") << name;
  auto back = parseKernelName(name);
  ASSERT_OK(back);
  EXPECT_EQ(back->imageStream, 32);
  EXPECT_EQ(back->name(), name);
  g->imageStream = 64;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "R = 8, 16 or 32");
  g->imageStream = 8;
  g->bm = 256;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "with BM 256");
  g->bm = 128;
  g->splitK = 1;
  g->persistent = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "persistent");
  auto inlineQ = makeGemmA4W4Spec(Arch::SM90A, 1536, 7168, 128);
  ASSERT_OK(inlineQ);
  inlineQ->imageStream = 32;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*inlineQ), "got gemm_a4w4");
}

TEST(KernelName, DefaultStagesMustFitSharedMemory) {
  // BM 128 x BK 256 on the image at its default 5 stages needs 405 KiB; the
  // launch used to fail in cuFuncSetAttribute. Two stages fit.
  auto g = makeGemmA4W4Spec(Arch::SM90A, 2048, 2048, 128, kDefaultScaleRounding, Activation::None,
                            {0.0f, 0.0f}, OpKind::GemmQdqA4W4);
  ASSERT_OK(g);
  g->bk = 256;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*g), "use fewer stages or BK 128");
  g->stages = 2;
  ASSERT_OK(verifyKernelSpec(*g));
}

TEST(KernelName, ZeroKTileIsAnErrorNotADivision) {
  // Found by MutatedNamesNeverCrash (MXFP4_TEST_SEED=242): sm_90a's step
  // counts divided by BK before the K tile was checked.
  EXPECT_ERROR_CONTAINS(parseKernelName("gemm_a4w4_sm90a_n7680_k1024_bm16_bn128_bk0_ks1_nearest_"
                                        "wsm90mma16_ssm90mma16_anone_ebf16"),
                        "the tile must be positive, got BM 16, BN 128, BK 0");
}

TEST(KernelName, MutatedNamesNeverCrash) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-.X/\xff";
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string name = randomSpec(rng).name();
    int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits && !name.empty(); ++e) {
      size_t at = rng() % name.size();
      switch (rng() % 4) {
      case 0:
        name.erase(at, 1 + rng() % 4);
        break;
      case 1:
        name.insert(name.begin() + long(at), alphabet[rng() % alphabet.size()]);
        break;
      case 2:
        name[at] = alphabet[rng() % alphabet.size()];
        break;
      case 3:
        name.resize(at);
        break;
      }
    }
    auto s = parseKernelName(name);
    if (s) {
      ++parsed; // a mutation that is still a valid canonical name
      ASSERT_EQ(s->name(), name);
    } else {
      std::string msg = s.takeError().message();
      ASSERT_EQ(msg.rfind("kernel name '", 0), 0u) << msg;
    }
  }
  RecordProperty("still_valid", parsed);
}

} // namespace
