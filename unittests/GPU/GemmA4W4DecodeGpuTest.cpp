//===- GemmA4W4DecodeGpuTest.cpp - The sm_90a decode variant on a GPU -----===//
//
// Tier L2: skipped without a device (GemmA4W4GpuTest.cpp has the rest). The
// decode variant (weights straight to registers, every K step's activations
// quantized first) against the K loop bit for bit, and in G warpgroups
// splitting a workgroup's K steps against G splits bit for bit and the
// float64 QDQ reference; the table's and the rule's decode tiles giving way
// to forced options they cannot run.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Bf16Compare.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/PoisonedGemm.h"
#include "TestUtil/QdqCheck.h"
#include "TestUtil/Random.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"

#include "gtest/gtest.h"

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class GemmDecode : public SeededTest {};

TEST_F(GemmDecode, DecodeVariantAgreesBitForBit) {
  // The decode variant reads the weights into registers and quantizes every
  // K step's activations up front, but quantizes them as the K loop does
  // and issues the same wgmmas in the same order on the same operands, and
  // splits and sums K as it does: the outputs are equal, for BN 128 and 64,
  // BK 128 and 256, BM 8 to 32, with and without split-K.
  OPEN_DEVICE_OR_SKIP(dev);
  struct Case {
    int64_t n, k, m, bm, bn, bk, split;
  };
  for (const Case &c : {Case{8448, 7168, 1, 8, 0, 0, 8}, Case{7168, 4224, 5, 8, 64, 0, 11},
                        Case{1536, 7168, 8, 8, 0, 256, 14}, Case{7168, 768, 3, 8, 64, 256, 1},
                        Case{1536, 7168, 31, 32, 0, 0, 8}, Case{1536, 2048, 16, 16, 0, 0, 1},
                        Case{1536, 4224, 13, 16, 64, 0, 11}}) {
    SCOPED_TRACE(testing::Message()
                 << "N=" << c.n << " K=" << c.k << " M=" << c.m << " BM=" << c.bm << " BN=" << c.bn
                 << " BK=" << c.bk << " split=" << c.split << " seed=" << seed);
    HostWeights w = randomWeights(rng, c.n, c.k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, c.n, c.k);
    ASSERT_OK(prepared);
    std::vector<uint16_t> a = randomActivations(rng, c.m, c.k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(c.m * c.n * 2));
    da.upload(a);
    std::vector<uint16_t> looped;
    for (bool decode : {false, true}) {
      GemmA4W4Options o;
      o.overrides.bm = c.bm;
      o.overrides.splitK = c.split;
      if (c.bn)
        o.overrides.bn = c.bn;
      if (c.bk)
        o.overrides.bk = c.bk;
      o.overrides.preQuantize = false;
      o.overrides.decode = decode;
      auto out = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, uint8_t(0x3C + decode));
      ASSERT_OK(out);
      if (!decode) {
        looped = std::move(*out);
        continue;
      }
      EXPECT_EQ(bf16Differences(*out, looped, "decode variant", "inline K loop"), 0);
    }
  }
  // The table's decode tile (1536x7168 M = 1: BN 64 x 14 splits) gives way
  // to a forced split that does not divide its 56 K steps; forced itself
  // with one, it is refused.
  const int64_t n = 1536, k = 7168;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  ASSERT_TRUE(selectGemmA4W4Tile(Arch::SM90A, n, k, 1).decode);
  DeviceBuffer da(dev, size_t(k) * 2), dc(dev, size_t(n) * 2);
  da.upload(randomActivations(rng, 1, k));
  GemmA4W4Options uneven;
  uneven.overrides.splitK = 6;
  ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), uneven));
  ASSERT_OK(dev.synchronize());
  uneven.overrides.decode = true;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), uneven),
                        "must be a multiple of BK x split-K");
}

TEST_F(GemmDecode, DecodeGroupsAgreeBitForBit) {
  // G warpgroups splitting a decode workgroup's K steps add their partial
  // tiles in warpgroup order, as split-K adds G splits: without split-K the
  // outputs are those of one warpgroup in G splits, bit for bit (BN 64 /
  // 128, BK 128 / 256, BM 8 / 16, unrolled steps and the loop's queue,
  // ragged M); with split-K too they match the float64 reference and
  // repeat bit for bit.
  OPEN_DEVICE_OR_SKIP(dev);
  struct Case {
    int64_t n, k, m, bm, bn, bk, groups, split;
  };
  for (const Case &c :
       {Case{1536, 7168, 8, 8, 64, 128, 4, 1}, Case{7168, 4224, 3, 8, 64, 128, 3, 1},
        Case{1536, 2048, 13, 16, 128, 128, 2, 1}, Case{1536, 7168, 1, 8, 128, 256, 2, 1},
        Case{8448, 7168, 1, 8, 64, 128, 2, 7}, Case{1536, 7168, 29, 32, 64, 128, 2, 4}}) {
    SCOPED_TRACE(testing::Message() << "N=" << c.n << " K=" << c.k << " M=" << c.m << " BM=" << c.bm
                                    << " BN=" << c.bn << " BK=" << c.bk << " groups=" << c.groups
                                    << " split=" << c.split << " seed=" << seed);
    HostWeights w = randomWeights(rng, c.n, c.k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, c.n, c.k);
    ASSERT_OK(prepared);
    std::vector<uint16_t> a = randomActivations(rng, c.m, c.k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(c.m * c.n * 2));
    da.upload(a);
    GemmA4W4Options o;
    o.overrides.bm = c.bm;
    o.overrides.bn = c.bn;
    o.overrides.bk = c.bk;
    o.overrides.preQuantize = false;
    o.overrides.decode = true;
    o.overrides.decodeGroups = c.groups;
    o.overrides.splitK = c.split;
    auto grouped = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3C);
    ASSERT_OK(grouped);
    if (c.split == 1) {
      o.overrides.decodeGroups = 1;
      o.overrides.splitK = c.groups;
      auto splits = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3D);
      ASSERT_OK(splits);
      EXPECT_EQ(bf16Differences(*grouped, *splits, "decode groups", "split-K"), 0);
      continue;
    }
    expectMatchesQdq(rng, a, w, c.m, *grouped);
    auto again = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3D);
    ASSERT_OK(again);
    EXPECT_EQ(bf16Differences(*again, *grouped, "second run", "first run"), 0);
  }
  // Three warpgroups of two BK 128 steps (the rule's tile for 7168x768 at
  // M 9..16, forced here at M = 1) cannot share a forced BK 256's three
  // steps: one warpgroup takes them, and forced with three, it is refused.
  const int64_t n = 7168, k = 768;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  std::vector<uint16_t> a = randomActivations(rng, 1, k);
  DeviceBuffer da(dev, size_t(k) * 2), dc(dev, size_t(n) * 2);
  da.upload(a);
  GemmA4W4Options longSteps;
  longSteps.overrides.decode = true;
  longSteps.overrides.bn = 64;
  longSteps.overrides.bk = 256;
  auto out = poisonedGemm(dev, da, dc, 1, n, **prepared, longSteps, 0x3E);
  ASSERT_OK(out);
  expectMatchesQdq(rng, a, w, 1, *out);
  longSteps.overrides.decodeGroups = 3;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), 1, **prepared, dc.get(), longSteps),
                        "a multiple of 3 and at least 6");
  // Warpgroups asked for where no decode variant runs (M = 128: the image's
  // BM 128) are refused, not dropped.
  GemmA4W4Options noDecode;
  noDecode.overrides.decodeGroups = 2;
  DeviceBuffer db(dev, size_t(128 * k) * 2), dd(dev, size_t(128 * n) * 2);
  db.upload(randomActivations(rng, 128, k));
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, db.get(), 128, **prepared, dd.get(), noDecode),
                        "force decode = true too");
  // The rule's short-K tiles, ragged M: the warp-split variant at M <= 8,
  // four and two warpgroups at BM 16.
  for (int64_t m : {5, 13}) {
    checkPoint(dev, rng, seed, 4096, 1024, m, 48, /*print=*/false);
    checkPoint(dev, rng, seed, 7168, 512, m - 2, 48, /*print=*/false);
  }
}

} // namespace
