//===- GemmA4W4WarpSplitGpuTest.cpp - The sm_90a warp-split variant -------===//
//
// Tier L2: skipped without a device. The warp-split variant (warps of a
// workgroup splitting K, mma.sync, each lane quantizing its own token's
// blocks) against the float64 QDQ reference for every rounding mode, with
// adversarial blocks and blocks of every scale, ragged M up to 8 and warp
// counts that split the chunks unevenly; repeatable bit for bit; and the
// options it does not combine with refused.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Bf16Compare.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/PoisonedGemm.h"
#include "TestUtil/QdqCheck.h"
#include "TestUtil/Random.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Ops/GemmA4W4.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class GemmWarpSplit : public SeededTest {};

/// C against the float64 QDQ reference of `mode`, with the tolerance of
/// QdqCheck.h (FP32 accumulation, BF16 output), where the kernel's
/// arithmetic can hold the values: not in rows with a block of scale code
/// 253 or 254 (its E2M1 values of 4 and 6 exceed BF16, the MMA operand
/// type, in every kernel), nor where the products' sum leaves FP32.
/// Returns the number of elements checked.
int64_t expectMatchesQdqMode(const std::vector<uint16_t> &a, const HostWeights &w, int64_t m,
                             const std::vector<uint16_t> &c, ScaleRounding mode) {
  auto ref = referenceGemmQdq(a, m, w.k, w.mx(), mode);
  auto q = quantizeBf16(a, m, w.k, mode);
  EXPECT_TRUE(ref && q);
  if (!ref || !q)
    return 0;
  std::vector<bool> bf16Range(size_t(m), true);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t b = 0; b < w.k / 32; ++b) {
      const uint8_t code = q->scales[size_t(r * (w.k / 32) + b)];
      bf16Range[size_t(r)] = bf16Range[size_t(r)] && !(code == 253 || code == 254);
    }
  const double tol = double(w.k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
  int64_t bad = 0, checked = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double got = bf16ToFloat(c[i]), want = ref->c[i];
    if (!bf16Range[i / size_t(w.n)] || (!std::isnan(want) && ref->absSum[i] > 1e38))
      continue;
    ++checked;
    const bool ok = std::isnan(want)
                        ? std::isnan(got)
                        : std::isfinite(got) && std::fabs(got - want) <= tol * ref->absSum[i];
    if (!ok && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": gpu " << got << " ref " << want << " bound "
                    << tol * ref->absSum[i];
  }
  EXPECT_EQ(bad, 0);
  return checked;
}

TEST_F(GemmWarpSplit, MatchesQdqReferenceAndRepeats) {
  // BN 32 and 16; warps taking equal and unequal shares of the chunks
  // (56 / 8, 33 / 11, 56 / 14, 6 / 4, 8 / 3, 33 / 16, 16 / 16); M 1..9
  // (one token: the loop's pass of 8 chunks, once or twice a warp; M = 9:
  // a second M tile of one row).
  OPEN_DEVICE_OR_SKIP(dev);
  struct Case {
    int64_t n, k, m, bn, warps;
  };
  for (const Case &c :
       {Case{8448, 7168, 1, 32, 8}, Case{8448, 7168, 8, 32, 8}, Case{7168, 4224, 5, 32, 11},
        Case{1536, 7168, 3, 16, 14}, Case{7168, 768, 7, 16, 4}, Case{4096, 1024, 2, 32, 3},
        Case{1536, 4224, 6, 16, 16}, Case{2048, 2048, 4, 32, 16}, Case{1536, 7168, 1, 16, 5},
        Case{7168, 4224, 1, 32, 11}, Case{4096, 1024, 9, 32, 3}}) {
    SCOPED_TRACE(testing::Message() << "N=" << c.n << " K=" << c.k << " M=" << c.m << " BN=" << c.bn
                                    << " warps=" << c.warps << " seed=" << seed);
    HostWeights w = randomWeights(rng, c.n, c.k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, c.n, c.k);
    ASSERT_OK(prepared);
    std::vector<uint16_t> a = randomActivations(rng, c.m, c.k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(c.m * c.n * 2));
    da.upload(a);
    GemmA4W4Options o;
    o.overrides.warpSplitK = c.warps;
    o.overrides.bn = c.bn;
    auto out = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3C);
    ASSERT_OK(out);
    expectMatchesQdq(rng, a, w, c.m, *out);
    auto again = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3D);
    ASSERT_OK(again);
    EXPECT_EQ(bf16Differences(*again, *out, "second run", "first run"), 0);
  }
}

TEST_F(GemmWarpSplit, EveryRoundingModeAndScale) {
  // Each lane quantizes its token's blocks with the quantizer's arithmetic:
  // the adversarial blocks (zeros, +-6, huge, tiny, Inf) and blocks of every
  // E8M0 code (both quantizer paths) in every rounding mode, against weights
  // of real scales (folded); then weights with scales of 128 and more (not
  // folded) on the adversarial blocks alone (with every activation code too
  // the true sums exceed the FP32 range the kernel accumulates in).
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 7168, m = 8;
  for (bool largeScales : {false, true}) {
    HostWeights w = randomWeights(rng, n, k);
    if (largeScales)
      for (size_t i = 0; i < w.scales.size(); i += 97)
        w.scales[i] = uint8_t(128 + rng() % 8);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
    ASSERT_OK(prepared);
    if (largeScales)
      ASSERT_FALSE((*prepared)->scalesBelow128());
    std::vector<uint16_t> a = randomActivations(rng, m, k);
    plantAdversarialBlocks(a, m, k);
    if (!largeScales)
      plantScaleSweep(rng, a, m, k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * n * 2));
    da.upload(a);
    for (ScaleRounding mode : allScaleRoundings()) {
      SCOPED_TRACE(testing::Message() << "rounding " << toString(mode) << " large weight scales "
                                      << largeScales << " seed=" << seed);
      GemmA4W4Options o;
      o.overrides.warpSplitK = 8;
      o.rounding = mode;
      auto out = poisonedGemm(dev, da, dc, m, n, **prepared, o, 0x3E);
      ASSERT_OK(out);
      // Rows 1, 4 and 7 hold the scale sweep, whose largest blocks leave
      // BF16 and FP32; the others (row 0's adversarial blocks in at least
      // half the modes) are checked whole.
      EXPECT_GE(expectMatchesQdqMode(a, w, m, *out, mode), 4 * n);
    }
  }
}

TEST_F(GemmWarpSplit, RefusesWhatItDoesNotRun) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 768;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  DeviceBuffer da(dev, size_t(16 * k) * 2), dc(dev, size_t(16 * n) * 2);
  da.upload(randomActivations(rng, 16, k));
  GemmA4W4Options o;
  o.overrides.warpSplitK = 7; // K = 768 has 6 chunks
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), o),
                        "K = 768 has 6 chunks, got 7 warps");
  o.overrides.warpSplitK = 4;
  o.overrides.splitK = 2;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), o),
                        "without split-K");
  o.overrides.splitK.reset();
  o.overrides.bn = 64;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), o),
                        "BN 16 or 32");
  o.overrides.bn.reset();
  o.overrides.preQuantize = true;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), o),
                        "does not apply with preQuantize");
  // Past one M tile of 8 it would read the weights once per 8 tokens: the
  // variant is BM 8, and M = 16 runs two of its tiles, still correct.
  o.overrides.preQuantize.reset();
  std::vector<uint16_t> a16 = randomActivations(rng, 16, k);
  da.upload(a16);
  auto out = poisonedGemm(dev, da, dc, 16, n, **prepared, o, 0x3F);
  ASSERT_OK(out);
  expectMatchesQdq(rng, a16, w, 16, *out);
}

} // namespace
