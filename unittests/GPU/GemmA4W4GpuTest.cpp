//===- GemmA4W4GpuTest.cpp - Dense A4W4 GEMM numerics on a GPU -------------===//
//
// Tier L2: skipped without a device. Everything goes through the public API
// (prepareGemmA4W4Weight, gemmA4W4), so the JIT, cache, runtime and layouts
// are exercised with the kernels. Inputs are fresh random data with a logged
// seed (MXFP4_TEST_SEED replays); outputs are poisoned first.
//
//  - the inline quantization matches the CPU quantizer byte for byte
//    (codes and scales) for all four rounding modes, with adversarial blocks
//    and blocks of every scale, and without the dump (the packed bf16 path)
//    the GEMM's output is bit for bit the same;
//  - the GEMM matches the float64 QDQ reference within
//    (K * 2^-24 + 2^-8) * sum_k |a_k w_k| (FP32 accumulation, BF16 output) on
//    the seed's 24 points and ragged M, and never writes rows >= M;
//  - weights with all scales below 128 take the folded dequantization (one
//    multiply), bit for bit the unfolded one;
//  - split-K and stream-K repeat bit for bit and agree with whole tiles;
//  - any N >= 1 and K % 32 (N and K tails) match the reference, for
//    gemmA4W4 and gemmMxA4W4, without reading or writing past the buffers.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Bf16Compare.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/PoisonedGemm.h"
#include "TestUtil/QdqCheck.h"
#include "TestUtil/Random.h"
#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class Gemm : public SeededTest {};

TEST_F(Gemm, InlineQuantizationMatchesTheCpuQuantizer) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 256, k = 1024;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  for (ScaleRounding mode : allScaleRoundings())
    for (int64_t m : {1, 7, 33, 129}) {
      SCOPED_TRACE(testing::Message()
                   << std::string(toString(mode)) << " M=" << m << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      plantAdversarialBlocks(a, m, k);
      plantScaleSweep(rng, a, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2)), codes(dev, size_t(m * k / 2)),
          scales(dev, size_t(m * k / 32));
      da.upload(a);
      dc.fill(0xFF);
      codes.fill(0xAA);
      scales.fill(0xAA);
      GemmA4W4Options opts;
      opts.rounding = mode;
      opts.overrides.preQuantize = false; // the inline quantizer (QuantizeMxGpuTest: the other)
      opts.dumpCodes = codes.get();
      opts.dumpScales = scales.get();
      ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), opts));
      ASSERT_OK(dev.synchronize());
      auto cpu = quantizeBf16(a, m, k, mode);
      ASSERT_OK(cpu);
      std::vector<uint8_t> gotCodes = codes.download<uint8_t>(size_t(m * k / 2));
      std::vector<uint8_t> gotScales = scales.download<uint8_t>(size_t(m * k / 32));
      EXPECT_EQ(0, std::memcmp(gotScales.data(), cpu->scales.data(), gotScales.size()))
          << "E8M0 scales differ";
      EXPECT_EQ(0, std::memcmp(gotCodes.data(), cpu->data.data(), gotCodes.size()))
          << "E2M1 codes differ";
      for (size_t i = 0; i < gotScales.size() && i < 200000; ++i)
        if (gotScales[i] != cpu->scales[i]) {
          ADD_FAILURE() << "first scale mismatch at " << i << ": gpu " << int(gotScales[i])
                        << " cpu " << int(cpu->scales[i]);
          break;
        }
      // Without the dump, most blocks take the packed bf16 path (E2M1Grid.h)
      // instead of the f32 one: the MMA must see the same operands. A dump
      // rules out the decode and warp-split variants dispatch takes at small
      // M, whose sums run in another order, so the call without it is pinned
      // to the dump call's schedule.
      std::vector<uint16_t> withDump = dc.download<uint16_t>(size_t(m * n));
      const GemmWeightFacts facts{(*prepared)->arch(), n, k, (*prepared)->scalesBelow128()};
      auto dumpPlan = planGemmA4W4(facts, m, opts);
      ASSERT_OK(dumpPlan);
      const KernelSpec dumped = dumpPlan->gemms.back();
      opts.dumpCodes = nullptr;
      opts.dumpScales = nullptr;
      experimental::GemmA4W4Overrides &o = opts.overrides;
      o.bm = dumped.bm;
      o.bn = dumped.bn;
      o.bk = dumped.bk;
      o.splitK = dumped.splitK;
      o.stages = dumped.stages;
      o.decode = dumped.decode;
      o.warpSplitK = dumped.warpSplitK;
      auto plainPlan = planGemmA4W4(facts, m, opts);
      ASSERT_OK(plainPlan);
      KernelSpec pinned = plainPlan->gemms.back();
      pinned.epilogue = dumped.epilogue;
      ASSERT_EQ(pinned.name(), dumped.name()) << "the schedule was not pinned";
      auto packed = poisonedGemm(dev, da, dc, m, n, **prepared, opts, 0xFF);
      ASSERT_OK(packed);
      EXPECT_EQ(0, std::memcmp(packed->data(), withDump.data(), withDump.size() * 2))
          << "the packed quantizer path changed the GEMM's output";
    }
}

struct Point {
  int64_t n, k, m;
};

class SeedPoints : public ::testing::TestWithParam<Point> {};

TEST_P(SeedPoints, MatchesTheQdqReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  uint64_t seed = freshSeed();
  std::mt19937_64 rng(seed);
  Point p = GetParam();
  checkPoint(dev, rng, seed, p.n, p.k, p.m);
}

std::vector<Point> seedPoints() {
  std::vector<Point> pts;
  for (auto [n, k] :
       {std::pair<int64_t, int64_t>{8448, 7168}, {7168, 4224}, {1536, 7168}, {7168, 768}})
    for (int64_t m : {1, 8, 32, 128, 512, 2048})
      pts.push_back({n, k, m});
  return pts;
}

std::string pointName(const testing::TestParamInfo<Point> &i) {
  return "N" + std::to_string(i.param.n) + "_K" + std::to_string(i.param.k) + "_M" +
         std::to_string(i.param.m);
}

INSTANTIATE_TEST_SUITE_P(Seed, SeedPoints, ::testing::ValuesIn(seedPoints()), pointName);

// The dense shapes of DeepSeek-R1 FP4, Kimi-K3 and AITER's dense tests
// beyond the seed's (mxfp4-bench --preset=model-dense), where the rule, not
// the measured table, picks the tile: the decode variant at M <= 8 (and at
// BM 16 up to M = 32 where its grid is small), BM 128 from M = 33, BN 64 x 4
// splits at 1536x4224 M = 128, stream-K at 9216x7168 M = 512; and the
// shapes whose M <= 8 entries the decode rule replaced.
std::vector<Point> modelPoints() {
  std::vector<Point> pts;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{7168, 4608},
                      {9216, 7168},
                      {3584, 7168},
                      {7168, 3584},
                      {1536, 4224}})
    for (int64_t m : {1, 8, 64, 128, 512})
      pts.push_back({n, k, m});
  pts.push_back({7168, 768, 48});  // BM 128 x BN 64 from M = 33
  pts.push_back({1536, 4224, 12}); // the decode variant at BM 16 (11 splits)
  pts.push_back({7168, 3584, 16}); // the same, 7 splits of 112 tiles
  pts.push_back({1536, 7168, 9});  // the same, 14 splits of 24 tiles
  pts.push_back({7168, 7168, 1});
  pts.push_back({8448, 4224, 8});
  return pts;
}

INSTANTIATE_TEST_SUITE_P(Model, SeedPoints, ::testing::ValuesIn(modelPoints()), pointName);

TEST_F(Gemm, RaggedM) {
  OPEN_DEVICE_OR_SKIP(dev);
  for (int64_t m : {1, 2, 3, 5, 9, 15, 17, 31, 33, 63, 65, 100, 127, 129, 2047})
    checkPoint(dev, rng, seed, 1536, 768, m, 48, /*print=*/false);
  // Long K, 8 < M <= 32: the rule's decode variant at BM 16 (4096x2048:
  // 64 tiles x 4 splits, two row tiles from M = 17), its BM 32 image tiles
  // in two warpgroups (2048x7168 M = 24: 16 tiles x 8 splits on 8 stages),
  // and the table's 8448x7168 entries of M = 9..16 and 17..32 (6 and 4
  // splits).
  for (int64_t m : {9, 16, 17, 31})
    checkPoint(dev, rng, seed, 4096, 2048, m, 48, /*print=*/false);
  checkPoint(dev, rng, seed, 2048, 7168, 24, 48, /*print=*/false);
  for (int64_t m : {13, 25})
    checkPoint(dev, rng, seed, 8448, 7168, m, 48, /*print=*/false);
}

// Any N >= 1 and K % 32 (sm_90a pads the weights to whole 128 tiles, reads
// activation columns past K as zeros and stores no column past N): the
// float64 QDQ reference on the paths dispatch takes at each M (the decode
// and warp-split variants, split-K, BM 128 inline with a K tail, the image
// with an N tail), GPT-OSS's 2880 among them. A guard row after C keeps
// its poison, and NaNs right after A (what a read past K of row M-1 would
// meet, times a zero weight: NaN) change nothing. gemmMxA4W4 takes the
// same shapes on CPU-quantized activations, with NaN scales past them.
TEST_F(Gemm, AnyNAndKMultipleOf32) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Shape {
    int64_t n, k;
    std::vector<int64_t> ms;
  };
  const Shape shapes[] = {{2880, 2880, {1, 8, 13, 32, 77, 128, 600, 2048}},
                          {5120, 2880, {1, 64, 512}},
                          {2880, 4096, {1, 8, 300, 1100}},
                          {1, 256, {1, 5, 200}},
                          {100, 4128, {1, 33, 129}},
                          {7200, 7168, {1, 16, 300}},
                          {200, 288, {3, 40}},
                          {129, 32, {1, 9, 130}},
                          {8, 96, {2, 300}},
                          // Whole BN 64 tiles past N, two K steps of 128:
                          // the tiles cover more than the last tile.
                          {192, 128, {1, 17}},
                          {2880, 7168, {1, 8, 100}}};
  const uint16_t kNaN = 0x7FC0;
  for (const Shape &shape : shapes) {
    const int64_t n = shape.n, k = shape.k;
    HostWeights w = randomWeights(rng, n, k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
    ASSERT_OK(prepared);
    for (int64_t m : shape.ms) {
      SCOPED_TRACE(testing::Message() << "N=" << n << " K=" << k << " M=" << m << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      plantAdversarialBlocks(a, m, k);
      std::vector<uint16_t> guarded = a;
      guarded.resize(a.size() + 256, kNaN);
      DeviceBuffer da(dev, guarded.size() * 2), dc(dev, size_t((m + 1) * n * 2));
      da.upload(guarded);
      std::vector<uint16_t> c = gemmWithGuardRow(dev, da, dc, m, n, **prepared);
      ASSERT_FALSE(c.empty());
      expectMatchesQdq(rng, a, w, m, c);

      auto qa = quantizeBf16(a, m, k, kDefaultScaleRounding);
      ASSERT_OK(qa);
      std::vector<uint8_t> codesGuarded = qa->data, scalesGuarded = qa->scales;
      codesGuarded.resize(codesGuarded.size() + 128, 0x77);
      scalesGuarded.resize(scalesGuarded.size() + 16, 0xFF); // NaN scales
      DeviceBuffer codes(dev, codesGuarded.size()), scales(dev, scalesGuarded.size());
      codes.upload(codesGuarded);
      scales.upload(scalesGuarded);
      dc.fill(0xFF);
      ASSERT_OK(gemmMxA4W4(dev, nullptr, codes.get(), scales.get(), m, **prepared, dc.get()));
      ASSERT_OK(dev.synchronize());
      std::vector<uint16_t> mx = dc.download<uint16_t>(size_t((m + 1) * n));
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(mx[size_t(m * n + j)], 0xFFFF) << "gemmMxA4W4 wrote past row M at column " << j;
      mx.resize(size_t(m * n));
      // The CPU quantizer's bytes are the inline quantizer's (the test
      // above): the same reference.
      expectMatchesQdq(rng, a, w, m, mx);
    }
  }
}

TEST_F(Gemm, SplitKIsRepeatableAndAgreesWithNoSplit) {
  // The split-K reduction (the last split waits for the others and sums)
  // leaves its counters zero: repeated calls on one PreparedWeight give the
  // same answer as the unsplit kernel, and the same bits, also after the
  // scratch grew for a larger M; BM 128 sums up to 8 splits in a cluster (2
  // and 8 workgroups), the others in the global workspace (past a
  // register budget of loaded slices, a group of them at a time in a loop).
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 7168;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  ASSERT_GT(selectGemmA4W4Tile(Arch::SM90A, n, k, 8).splitK, 1);
  // (M, BM, split, two warpgroups on the image: 256 threads' partial tiles).
  for (auto [m, bm, split, wg2] : {std::tuple<int64_t, int64_t, int64_t, bool>{8, 0, 0, false},
                                   {300, 64, 4, false},
                                   {600, 128, 2, false},
                                   {200, 128, 8, false},
                                   {200, 128, 9, false} /* BM 128 in the workspace */,
                                   {130, 128, 3, false} /* 56 steps: 18, 19, 19 */,
                                   {32, 32, 8, true},
                                   // The workspace sum a group of slices at a time (Sm90Store.cpp):
                                   // whole groups and a tail; only groups; 26 slices, BM 16.
                                   {20, 32, 8, true},
                                   {32, 32, 14, true},
                                   {13, 16, 28, true},
                                   {600, 256, 2, false},
                                   {300, 256, 5, false},
                                   {500, 192, 3, false},
                                   {8, 0, 0, false}}) {
    SCOPED_TRACE(testing::Message() << "M=" << m << " BM=" << bm << " split=" << split
                                    << (wg2 ? " two warpgroups" : "") << " seed=" << seed);
    std::vector<uint16_t> a = randomActivations(rng, m, k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
    da.upload(a);
    GemmA4W4Options single, splitOpts;
    single.overrides.splitK = 1;
    if (bm)
      single.overrides.bm = splitOpts.overrides.bm = bm;
    if (split)
      splitOpts.overrides.splitK = split;
    // Two warpgroups below BM 128, BM 192 and 256 exist on the activation image.
    if (wg2 || bm > 128)
      single.overrides.preQuantize = splitOpts.overrides.preQuantize = true;
    if (wg2)
      single.overrides.twoWarpgroups = splitOpts.overrides.twoWarpgroups = true;
    ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), single));
    ASSERT_OK(dev.synchronize());
    std::vector<uint16_t> ref = dc.download<uint16_t>(size_t(m * n)), first;
    for (int rep = 0; rep < 3; ++rep) {
      auto run = poisonedGemm(dev, da, dc, m, n, **prepared, splitOpts, 0xFF);
      ASSERT_OK(run);
      std::vector<uint16_t> got = std::move(*run);
      int64_t far = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double x = bf16ToFloat(got[i]), y = bf16ToFloat(ref[i]);
        // Only the order of the f32 sum differs: within a couple of bf16 ulps.
        if (!(std::fabs(x - y) <= std::ldexp(std::fabs(y), -6) + 1e-6))
          ++far;
      }
      EXPECT_EQ(far, 0) << "repetition " << rep;
      // The slices are added in split order, whichever workgroup is last:
      // every repetition is bit for bit the first.
      if (rep == 0)
        first = got;
      else
        EXPECT_TRUE(got == first) << "repetition " << rep << " differs from the first";
    }
  }
}

TEST_F(Gemm, FoldedScalesAgreeBitForBit) {
  // Weights whose scales are all below 128 (as in real checkpoints) take the
  // one-multiply dequantization by default; it must give the bits of the
  // two-multiply one (forced off) and match the QDQ reference; forcing it on
  // weights with a scale of 128 or more is an error.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 2048;
  HostWeights w = randomWeights(rng, n, k);
  w.scales = randomScales(rng, size_t(n * k / 32), 100, 127);
  w.scales[7] = 0; // the smallest scale, 2^-127, folds too
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  EXPECT_TRUE((*prepared)->scalesBelow128());
  for (int64_t m : {1, 77, 300})
    for (bool pre : {false, true}) {
      SCOPED_TRACE(testing::Message() << "M=" << m << " preQuantize=" << pre << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
      da.upload(a);
      std::vector<uint16_t> out[2];
      for (bool fold : {true, false}) {
        GemmA4W4Options o;
        o.overrides.preQuantize = pre;
        o.overrides.splitK = 1;
        if (!fold)
          o.overrides.foldScales = false;
        auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o, uint8_t(0xA5 + fold));
        ASSERT_OK(c);
        out[fold] = std::move(*c);
      }
      EXPECT_EQ(bf16Differences(out[1], out[0], "folded", "unfolded"), 0);
      expectMatchesQdq(rng, a, w, m, out[1]);
    }
  HostWeights big = randomWeights(rng, n, k);
  big.scales[3] = 128;
  auto unfoldable = prepareGemmA4W4Weight(dev, big.data, big.scales, n, k);
  ASSERT_OK(unfoldable);
  EXPECT_FALSE((*unfoldable)->scalesBelow128());
  DeviceBuffer da(dev, size_t(8 * k * 2)), dc(dev, size_t(8 * n * 2));
  GemmA4W4Options force;
  force.overrides.foldScales = true;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 8, **unfoldable, dc.get(), force),
                        "only when every scale is below 128");
}

TEST_F(Gemm, TileShapesAgreeBitForBit) {
  // Every M tile (BM 128, 192 and 256: two warpgroups, dynamic shared
  // memory; BM 192 tiles start mid-block in the image), every
  // stage count (BM 128 on two stages: two workgroups per SM, its own step
  // order) and two warpgroups below BM 128 sum each output in the same K
  // order, so without split-K the outputs are equal.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 2048;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  for (int64_t m : {77, 300})
    for (bool pre : {false, true}) {
      SCOPED_TRACE(testing::Message() << "M=" << m << " preQuantize=" << pre << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
      da.upload(a);
      std::vector<uint16_t> first;
      // (BM, stages, two warpgroups; the image kernel only).
      for (auto [bm, stages, wg2] : {std::tuple<int64_t, int64_t, bool>{16, 0, false},
                                     {32, 0, false},
                                     {64, 0, false},
                                     {128, 0, false},
                                     {128, 2, false},
                                     {128, 3, false},
                                     {32, 2, false},
                                     {16, 0, true},
                                     {32, 0, true},
                                     {64, 3, true},
                                     {256, 0, false},
                                     {256, 2, false},
                                     {192, 0, false},
                                     {192, 4, false}}) {
        if ((wg2 || bm > 128) && !pre)
          continue;
        GemmA4W4Options o;
        o.overrides.bm = bm;
        o.overrides.splitK = 1;
        o.overrides.preQuantize = pre;
        if (stages)
          o.overrides.stages = stages;
        if (wg2)
          o.overrides.twoWarpgroups = true;
        auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o, uint8_t(bm + stages));
        ASSERT_OK(c);
        if (first.empty()) {
          first = std::move(*c);
          continue;
        }
        const std::string what = "BM " + std::to_string(bm) +
                                 (stages ? ", " + std::to_string(stages) + " stages" : "") +
                                 (wg2 ? ", two warpgroups" : "");
        EXPECT_EQ(bf16Differences(*c, first, what, "BM 16"), 0) << what << " differs from BM 16";
      }
    }
}

TEST_F(Gemm, NarrowTilesAgreeBitForBit) {
  // BN 64 runs one warpgroup of 4 warps x 16 weight rows over half the
  // rows of a BN 128 tile, with the same wgmma K order per output, so each
  // variant (inline or image, split-K in a cluster or a workspace, the
  // persistent grid) gives the bits of its BN 128 twin.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536;
  for (int64_t k : {768, 2048}) {
    HostWeights w = randomWeights(rng, n, k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
    ASSERT_OK(prepared);
    for (int64_t m : {5, 77, 300}) {
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
      da.upload(a);
      // (BM, split-K, image, persistent).
      for (auto [bm, splits, image, persistent] :
           {std::tuple<int64_t, int64_t, bool, bool>{8, 1, false, false},
            {16, 3, false, false},
            {128, 1, false, false},
            {32, 1, true, false},
            {64, 1, true, false},
            {128, 1, true, false},
            {128, 1, true, true},
            {128, 2, true, false},
            {16, 2, true, false}}) {
        SCOPED_TRACE(testing::Message() << "K=" << k << " M=" << m << " BM " << bm << " split-K "
                                        << splits << (image ? " image" : " inline")
                                        << (persistent ? " persistent" : "") << " seed=" << seed);
        GemmA4W4Options o;
        o.overrides.bm = bm;
        o.overrides.splitK = splits;
        o.overrides.preQuantize = image;
        o.overrides.persistent = persistent;
        std::vector<uint16_t> outs[2];
        for (int64_t bn : {128, 64}) {
          o.overrides.bn = bn;
          auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o, uint8_t(0x3C + bn));
          ASSERT_OK(c);
          outs[bn == 64] = std::move(*c);
        }
        EXPECT_EQ(bf16Differences(outs[1], outs[0], "BN 64", "BN 128"), 0);
      }
    }
  }
}

TEST_F(Gemm, WideTilesAgreeBitForBit) {
  // BN 192 (the image kernel at BM 128) runs three warpgroups of 4 warps x
  // 16 weight rows, each with the wgmmas of a BN 128 warpgroup, the same K
  // order per output and the same split boundaries: the bits of its BN 128
  // twin, with split-K in a cluster or (past 8 splits) a workspace, on the
  // default five stages or three.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536;
  for (int64_t k : {768, 4608}) {
    HostWeights w = randomWeights(rng, n, k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
    ASSERT_OK(prepared);
    for (int64_t m : {77, 300}) {
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
      da.upload(a);
      // (split-K, stages).
      for (auto [splits, stages] :
           {std::pair<int64_t, int64_t>{1, 0}, {2, 0}, {3, 3}, {4, 0}, {9, 0}}) {
        if (k / 128 / splits < 2)
          continue;
        SCOPED_TRACE(testing::Message() << "K=" << k << " M=" << m << " split-K " << splits
                                        << " stages " << stages << " seed=" << seed);
        GemmA4W4Options o;
        o.overrides.bm = 128;
        o.overrides.splitK = splits;
        o.overrides.preQuantize = true;
        if (stages)
          o.overrides.stages = stages;
        std::vector<uint16_t> outs[2];
        for (int64_t bn : {128, 192}) {
          o.overrides.bn = bn;
          auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o, uint8_t(0x5A + bn / 64));
          ASSERT_OK(c);
          outs[bn == 192] = std::move(*c);
        }
        EXPECT_EQ(bf16Differences(outs[1], outs[0], "BN 192", "BN 128"), 0);
      }
    }
  }
}

TEST_F(Gemm, TableWideTileYieldsToForcedVariants) {
  // The table's BN 192 (1536x4224 M = 2048) is an image tile at BM 128:
  // a forced BM, inline quantization or the MXFP4-activation GEMM takes BN
  // 128 instead of failing, with the same bits.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 4224, m = 2048;
  ASSERT_EQ(selectGemmA4W4Tile(Arch::SM90A, n, k, m).bn, 192);
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  std::vector<uint16_t> a = randomActivations(rng, m, k);
  DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
  da.upload(a);
  GemmA4W4Options tableOnly; // the table's tile, whatever a tuned CSV says
  tableOnly.overrides.ignoreTunedCsv = true;
  auto table = poisonedGemm(dev, da, dc, m, n, **prepared, tableOnly, 0x11);
  ASSERT_OK(table);
  GemmA4W4Options bm64, inlineQ, mx;
  bm64.overrides.bm = 64;
  inlineQ.overrides.preQuantize = false;
  mx.overrides.dequantizeOnce = false;
  for (auto [name, o] : {std::pair<const char *, GemmA4W4Options>{"BM 64", bm64},
                         {"inline", inlineQ},
                         {"gemm_mxa4w4", mx}}) {
    SCOPED_TRACE(testing::Message() << name << " seed=" << seed);
    auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o, 0x22);
    ASSERT_OK(c);
    EXPECT_EQ(bf16Differences(*c, *table, name, "table"), 0);
  }
}

TEST_F(Gemm, QuantizerTileOverrideGivesTheSameBits) {
  // qdq_mxfp4's row tile only splits the work (below BM 64 direct stores,
  // at 64 bulk copies from shared memory): forced to any of its four sizes
  // the GEMM's output is the table's bit for bit; other sizes are refused.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 768, m = 300;
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  std::vector<uint16_t> a = randomActivations(rng, m, k);
  DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
  da.upload(a);
  GemmA4W4Options o;
  o.overrides.preQuantize = true;
  auto table = poisonedGemm(dev, da, dc, m, n, **prepared, o, 0x11);
  ASSERT_OK(table);
  for (int64_t bm : {8, 16, 32, 64}) {
    o.overrides.quantizerBm = bm;
    auto forced = poisonedGemm(dev, da, dc, m, n, **prepared, o, uint8_t(0x20 + bm));
    ASSERT_OK(forced);
    const std::string what = "quantizer BM " + std::to_string(bm);
    EXPECT_EQ(bf16Differences(*forced, *table, what, "the rule's"), 0) << what;
  }
  o.overrides.quantizerBm = 12;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), o),
                        "BM must be 8, 16, 32 or 64, got 12");
}

TEST_F(Gemm, PersistentGridAgreesBitForBit) {
  // A persistent grid takes several tiles per workgroup (here up to four:
  // more tiles than resident workgroups), its stages counting steps across
  // tiles and receiving the next tile's first steps early; each output sums
  // in the same K order as one tile per workgroup, so the outputs are equal.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536;
  for (int64_t k : {512, 768, 2048})
    for (int64_t m : {129, 2047, 4000}) {
      SCOPED_TRACE(testing::Message() << "K=" << k << " M=" << m << " seed=" << seed);
      HostWeights w = randomWeights(rng, n, k);
      auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
      ASSERT_OK(prepared);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
      da.upload(a);
      std::vector<uint16_t> first;
      // (persistent, stages, BM): BM 192 sums in the same K order too.
      for (auto [persistent, stages, bm] : {std::tuple<bool, int64_t, int64_t>{false, 0, 128},
                                            {true, 0, 128},
                                            {true, 2, 128},
                                            {true, 3, 128},
                                            {false, 0, 192},
                                            {true, 0, 192}}) {
        if (persistent && stages - 1 > k / 128)
          continue;
        GemmA4W4Options o;
        o.overrides.bm = bm;
        o.overrides.splitK = 1;
        o.overrides.preQuantize = true;
        o.overrides.persistent = persistent;
        if (stages)
          o.overrides.stages = stages;
        auto c = poisonedGemm(dev, da, dc, m, n, **prepared, o,
                              uint8_t(0x5A + stages + persistent + bm));
        ASSERT_OK(c);
        if (first.empty()) {
          first = std::move(*c);
          continue;
        }
        const std::string what = std::string(persistent ? "persistent, " : "") + "BM " +
                                 std::to_string(bm) + ", " + std::to_string(stages) + " stages";
        EXPECT_EQ(bf16Differences(*c, first, what, "one tile per workgroup"), 0) << what;
      }
    }
}

TEST_F(Gemm, StreamKIsRepeatableAndAgreesWithWholeTiles) {
  // Stream-K splits tiles between workgroups at any K step: here into up to
  // ~6 segments (M = 129, BM 128: 10 steps per workgroup of 56-step tiles)
  // and into segments of one step (K = 768 at M = 300, BM 256: 144
  // iterations over ~132 workgroups), after waves of whole tiles (7168 x
  // 4224 at M = 1000: 448 tiles, 3 waves and 52 split; 7168 x 768 at M =
  // 2048, BM 256: 2-3 steps each after 3 waves). Outputs agree with one whole tile per
  // workgroup within the f32 sum order, match the float64 reference, never
  // reach rows >= M, and repeat bit for bit (the partial sums are added in
  // K order whichever workgroup finishes last; the counters reset).
  OPEN_DEVICE_OR_SKIP(dev);
  for (auto [n, k, m, bm] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1536, 7168, 512, 128},
                             {1536, 7168, 129, 128},
                             {1536, 7168, 2048, 256},
                             {1536, 768, 300, 256},
                             {7168, 4224, 1000, 128},
                             {7168, 768, 2048, 256}}) {
    SCOPED_TRACE(testing::Message() << "N=" << n << " K=" << k << " M=" << m << " BM=" << bm
                                    << " seed=" << seed);
    HostWeights w = randomWeights(rng, n, k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
    ASSERT_OK(prepared);
    std::vector<uint16_t> a = randomActivations(rng, m, k);
    // One guard row after C: must still hold the poison.
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t((m + 1) * n * 2));
    da.upload(a);
    GemmA4W4Options whole, stream;
    whole.overrides.bm = stream.overrides.bm = bm;
    whole.overrides.splitK = stream.overrides.splitK = 1;
    whole.overrides.preQuantize = stream.overrides.preQuantize = true;
    whole.overrides.persistent = false;
    whole.overrides.streamK = false;
    stream.overrides.streamK = true;
    auto ref = poisonedGemm(dev, da, dc, m, n, **prepared, whole, 0x77);
    ASSERT_OK(ref);
    std::vector<uint16_t> first;
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<uint16_t> got = gemmWithGuardRow(dev, da, dc, m, n, **prepared, stream);
      ASSERT_EQ(got.size(), ref->size());
      int64_t far = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double x = bf16ToFloat(got[i]), y = bf16ToFloat((*ref)[i]);
        // Only the order of the f32 sum differs: within a couple of bf16 ulps.
        if (!(std::fabs(x - y) <= std::ldexp(std::fabs(y), -6) + 1e-6) && far++ < 5)
          ADD_FAILURE() << "element " << i << ": stream-K " << x << ", whole tiles " << y;
      }
      EXPECT_EQ(far, 0) << "repetition " << rep;
      if (rep == 0) {
        expectMatchesQdq(rng, a, w, m, got);
        first = std::move(got);
      } else {
        EXPECT_EQ(bf16Differences(got, first, "repetition " + std::to_string(rep), "the first"),
                  0);
      }
    }
  }
}

TEST_F(Gemm, SplitMAgreesBitForBit) {
  // The table splits 7168x4224 at M = 2048 into BM 256 on 1792 rows and
  // BM 128 on the last 256, two launches on one activation image; forced
  // splits leave ragged tails. Every output sums in the same K order as one
  // BM 128 grid, so the bits are equal, and nothing past row M is written.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 7168, k = 4224;
  ASSERT_EQ(selectGemmA4W4Tile(Arch::SM90A, n, k, 2048).splitM, 1792);
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  for (auto [m, splitM] : {std::pair<int64_t, int64_t>{2048, -1}, {700, 256}, {1000, 512}}) {
    SCOPED_TRACE(testing::Message() << "M=" << m << " split=" << splitM << " seed=" << seed);
    std::vector<uint16_t> a = randomActivations(rng, m, k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t((m + 1) * n * 2));
    da.upload(a);
    GemmA4W4Options one, split;
    one.overrides.bm = 128;
    one.overrides.splitK = 1;
    one.overrides.preQuantize = split.overrides.preQuantize = true;
    one.overrides.persistent = split.overrides.persistent = false;
    if (splitM > 0) {
      split.overrides.bm = 256;
      split.overrides.splitM = splitM;
    }
    auto ref = poisonedGemm(dev, da, dc, m, n, **prepared, one, 0x33);
    ASSERT_OK(ref);
    std::vector<uint16_t> got = gemmWithGuardRow(dev, da, dc, m, n, **prepared, split);
    ASSERT_EQ(got.size(), ref->size());
    EXPECT_EQ(bf16Differences(got, *ref, "split M", "one BM 128 grid"), 0);
    if (m == 2048) {
      expectMatchesQdq(rng, a, w, m, got);
      // Quantizing inline where the table picks BM 256 and a split takes
      // BM 128, the same bits.
      GemmA4W4Options inl;
      inl.overrides.preQuantize = false;
      std::vector<uint16_t> inlined = gemmWithGuardRow(dev, da, dc, m, n, **prepared, inl);
      EXPECT_EQ(bf16Differences(inlined, *ref, "inline", "one BM 128 grid"), 0);
    }
  }
  GemmA4W4Options bad;
  bad.overrides.preQuantize = true;
  bad.overrides.bm = 256;
  DeviceBuffer da(dev, size_t(512 * k * 2)), dc(dev, size_t(512 * n * 2));
  for (int64_t splitM : {100, 256, 512}) {
    bad.overrides.splitM = splitM;
    EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 256, **prepared, dc.get(), bad),
                          "splitM must be a positive multiple of 256 below M = 256");
  }
  bad.overrides.splitM = 256;
  bad.overrides.dequantizeOnce = false;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 512, **prepared, dc.get(), bad),
                        "does not apply with inline quantization");
}

TEST_F(Gemm, ApiRejectsBadInput) {
  OPEN_DEVICE_OR_SKIP(dev);
  HostWeights w = randomWeights(rng, 256, 512);
  EXPECT_ERROR_CONTAINS(prepareGemmA4W4Weight(dev, w.data, w.scales, 256, 1024), "bytes, got");
  EXPECT_ERROR_CONTAINS(prepareGemmA4W4Weight(dev, w.data, w.scales, 200, 650), "K % 32 == 0");
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, 256, 512);
  ASSERT_OK(prepared);
  DeviceBuffer da(dev, 4 * 512 * 2), dc(dev, 4 * 256 * 2);
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, nullptr, 4, **prepared, dc.get()), "null");
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 0, **prepared, dc.get()),
                        "M must be >= 1");
  EXPECT_ERROR_CONTAINS(
      gemmA4W4(dev, nullptr, static_cast<char *>(da.get()) + 2, 4, **prepared, dc.get()),
      "16-byte aligned");
  EXPECT_ERROR_CONTAINS(
      gemmA4W4(dev, nullptr, da.get(), 4, **prepared, static_cast<char *>(dc.get()) + 8),
      "output pointer must be 16-byte aligned");
  GemmA4W4Options bad;
  bad.overrides.bm = 24;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 4, **prepared, dc.get(), bad), "BM");
}

} // namespace
