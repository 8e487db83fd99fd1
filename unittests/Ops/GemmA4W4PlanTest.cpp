//===- GemmA4W4PlanTest.cpp - Dispatch and the AOT presets agree ----------===//
//
// planGemmA4W4 is dispatch; mxfp4-jit-compile --preset compiles
// presetKernels. An AOT cache is complete only if, at every point of a
// preset, every kernel dispatch runs is among the preset's, for weights
// with small scales and without (MXFP4_ASSERT_CACHE_HIT=1 would fail
// otherwise), and the preset compiles nothing dispatch does not run.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "TestUtil/Expected.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include "gtest/gtest.h"

#include <set>

using namespace mxfp4;

namespace {

TEST(GemmA4W4Plan, PresetsAreExactlyWhatDispatchRuns) {
  for (std::string_view preset : {"seed-dense", "model-dense"})
    for (Arch arch : {Arch::GFX950, Arch::GFX1250, Arch::SM90A})
      for (ScaleRounding r : {ScaleRounding::RoundUp, ScaleRounding::Nearest}) {
        SCOPED_TRACE(std::string(preset) + " " + std::string(toString(arch)));
        Expected<std::vector<PresetKernel>> kernels = presetKernels(preset, arch, r);
        ASSERT_OK(kernels);
        std::set<std::string> compiled, dispatched;
        for (const PresetKernel &k : *kernels) {
          ASSERT_TRUE(k.spec) << k.label << ": " << k.error;
          EXPECT_TRUE(compiled.insert(k.spec->name()).second) << "listed twice";
          EXPECT_FALSE(verifyKernelSpec(*k.spec)) << k.spec->name();
        }
        Expected<std::vector<std::pair<int64_t, int64_t>>> shapes = presetShapes(preset);
        ASSERT_OK(shapes);
        GemmA4W4Options options;
        options.rounding = r;
        // On any device, and on one of each size the shipped CSVs tune.
        std::set<int64_t> devices{0};
        Expected<const TunedTable *> shipped = processTunedTable();
        ASSERT_OK(shipped);
        for (const TunedRow *row : (*shipped)->rows())
          devices.insert(row->key.computeUnits);
        auto visit = [&](int64_t n, int64_t k, int64_t m, int64_t cu) {
          for (bool small : {true, false}) {
            Expected<GemmA4W4Plan> plan = planGemmA4W4({arch, n, k, small, cu}, m, options);
            ASSERT_OK(plan);
            for (const KernelSpec &s : plan->kernels()) {
              EXPECT_TRUE(compiled.count(s.name()))
                  << "dispatch runs " << s.name() << " at N=" << n << " K=" << k << " M=" << m
                  << " on " << cu << " SMs and the preset does not compile it";
              dispatched.insert(s.name());
            }
          }
        };
        // The preset's points on any device; on a device of a shipped row's
        // size, also that row's M.
        for (auto [n, k] : *shapes) {
          for (int64_t m : kPresetMs)
            for (int64_t cu : devices)
              visit(n, k, m, cu);
          for (const TunedRow *row : (*shipped)->rowsForShape(TunedKey::gemm(arch, 0, n, k)))
            visit(n, k, row->m, row->key.computeUnits);
        }
        EXPECT_EQ(compiled, dispatched);
      }
  EXPECT_ERROR_CONTAINS(presetShapes("moe"), "unknown preset 'moe'");
}

TEST(GemmA4W4Plan, FollowsThePathTheTableChooses) {
  // sm_90a: small M quantizes inline (one kernel), large M on the image
  // (qdq_mxfp4, then the GEMM), the variants of the table carried over.
  const GemmWeightFacts w{Arch::SM90A, 8448, 7168, true};
  Expected<GemmA4W4Plan> decode = planGemmA4W4(w, 1);
  ASSERT_OK(decode);
  EXPECT_EQ(decode->path, GemmA4W4Plan::Path::Inline);
  ASSERT_EQ(decode->gemms.size(), 1u);
  EXPECT_FALSE(decode->quantizer);
  EXPECT_EQ(decode->gemms[0].decode, selectGemmA4W4Tile(Arch::SM90A, 8448, 7168, 1).decode);
  EXPECT_TRUE(decode->gemms[0].foldedScales);

  Expected<GemmA4W4Plan> large = planGemmA4W4(w, 2048);
  ASSERT_OK(large);
  EXPECT_EQ(large->path, GemmA4W4Plan::Path::Image);
  ASSERT_TRUE(large->quantizer);
  EXPECT_EQ(large->quantizer->op, OpKind::QdqMx);
  EXPECT_EQ(large->gemms.front().op, OpKind::GemmQdqA4W4);
  EXPECT_EQ(large->splitM, selectGemmA4W4Tile(Arch::SM90A, 8448, 7168, 2048).splitM);
  EXPECT_EQ(large->gemms.size(), large->splitM ? 2u : 1u);

  // Scales of 128 or more: no folding, and forcing it is an error.
  Expected<GemmA4W4Plan> big = planGemmA4W4({Arch::SM90A, 8448, 7168, false}, 1);
  ASSERT_OK(big);
  EXPECT_FALSE(big->gemms[0].foldedScales);
  GemmA4W4Options fold;
  fold.overrides.foldScales = true;
  EXPECT_ERROR_CONTAINS(planGemmA4W4({Arch::SM90A, 8448, 7168, false}, 1, fold),
                        "only when every scale is below 128");

  // Forced: quantize once to MXFP4 codes, then gemm_mxa4w4.
  GemmA4W4Options mx;
  mx.overrides.preQuantize = true;
  mx.overrides.dequantizeOnce = false;
  Expected<GemmA4W4Plan> twoPass = planGemmA4W4(w, 512, mx);
  ASSERT_OK(twoPass);
  EXPECT_EQ(twoPass->path, GemmA4W4Plan::Path::MxActivations);
  ASSERT_TRUE(twoPass->quantizer);
  EXPECT_EQ(twoPass->quantizer->op, OpKind::QuantizeMx);
  EXPECT_EQ(twoPass->gemms[0].op, OpKind::GemmMxA4W4);

  // The streamed image: its quantizer carries the GEMM's split count.
  GemmA4W4Options streamed;
  streamed.overrides.imageStream = 2;
  streamed.overrides.preQuantize = true;
  streamed.overrides.bm = 128;
  streamed.overrides.persistent = false;
  streamed.overrides.streamK = false;
  Expected<GemmA4W4Plan> s = planGemmA4W4(w, 512, streamed);
  ASSERT_OK(s);
  ASSERT_EQ(s->path, GemmA4W4Plan::Path::StreamedImage);
  EXPECT_EQ(s->streamWorkgroupsPerSm, 2);
  EXPECT_EQ(s->quantizer->imageStream, s->gemms[0].splitK);
  EXPECT_EQ(s->gemms[0].imageStream, streamedQuantizerRows(512));
  EXPECT_EQ(s->quantizer->bm, streamedQuantizerRows(512));

  // AMD: one inline GEMM, never folded.
  Expected<GemmA4W4Plan> amd = planGemmA4W4({Arch::GFX950, 8448, 7168, true}, 128);
  ASSERT_OK(amd);
  EXPECT_EQ(amd->path, GemmA4W4Plan::Path::Inline);
  EXPECT_FALSE(amd->gemms[0].foldedScales);
  EXPECT_EQ(amd->gemms[0].splitK, 3); // 66 tiles on 256 CUs, workspace traffic bound
}

// Any N >= 1 and K % 32 on sm_90a: at every M the plan's kernels are legal
// (planGemmA4W4 verifies each) and cover the weights' whole tiles; a K tail
// quantizes inline, an N tail keeps the image but not stream-K.
TEST(GemmA4W4Plan, RaggedShapesPlanAtEveryM) {
  const std::pair<int64_t, int64_t> shapes[] = {{2880, 2880}, {5120, 2880}, {2880, 4096},
                                                {1, 256},     {100, 4128},  {7168 + 32, 7168},
                                                {200, 288},   {4096, 128},  {3, 32}};
  for (auto [n, k] : shapes)
    for (bool small : {true, false})
      for (int64_t m : {1,   3,   8,   9,   16,  17,   32,   33,   64,   100, 128,
                        129, 256, 300, 512, 777, 1024, 2048, 3000, 4096, 8192}) {
        SCOPED_TRACE(testing::Message() << n << "x" << k << " M = " << m);
        Expected<GemmA4W4Plan> plan = planGemmA4W4({Arch::SM90A, n, k, small}, m);
        ASSERT_OK(plan);
        Expected<GemmA4W4Plan> mx = planGemmA4W4({Arch::SM90A, n, k, small}, m, {}, true);
        ASSERT_OK(mx);
        EXPECT_EQ(mx->gemms.front().op, OpKind::GemmMxA4W4);
        std::vector<KernelSpec> all = plan->kernels();
        all.push_back(mx->gemms.front());
        for (const KernelSpec &s : all) {
          EXPECT_FALSE(s.streamK && n % 128 != 0);
          if (k % 128 != 0)
            EXPECT_TRUE(s.op == OpKind::GemmA4W4 || s.op == OpKind::GemmMxA4W4) << s.name();
          if (!isQuantizer(s.op)) {
            EXPECT_EQ(s.n, n);
            EXPECT_EQ(s.k, k);
          }
        }
      }
  // The image where K is whole steps and M large (N tail only).
  Expected<GemmA4W4Plan> image = planGemmA4W4({Arch::SM90A, 2880, 4096, true}, 4096);
  ASSERT_OK(image);
  EXPECT_EQ(image->path, GemmA4W4Plan::Path::Image);
}

TEST(GemmA4W4Plan, RefusesWhatNoKernelRuns) {
  const GemmWeightFacts w{Arch::SM90A, 8448, 7168, true};
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 0), "M must be >= 1");
  GemmA4W4Options half;
  int dummy = 0;
  half.dumpCodes = &dummy;
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 16, half), "needs both dumpCodes and dumpScales");
  GemmA4W4Options groups;
  groups.overrides.decodeGroups = 2;
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 2048, groups), "force decode = true too");
  GemmA4W4Options splitM;
  splitM.overrides.splitM = 100;
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 2048, splitM), "positive multiple of 256");
  GemmA4W4Options tooMany;
  tooMany.overrides.imageStream = 17;
  tooMany.overrides.preQuantize = true;
  tooMany.overrides.bm = 128;
  tooMany.overrides.persistent = false;
  tooMany.overrides.streamK = false;
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 2048, tooMany), "1 to 16 quantizer workgroups");
  EXPECT_ERROR_CONTAINS(planGemmA4W4(w, 16, half, /*mxActivations=*/true), "nothing to dump");
}

} // namespace
