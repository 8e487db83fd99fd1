//===- GemmA4W4ImageStreamGpuTest.cpp - The streamed activation image -----===//
//
// Tier L2: skipped without a device. The streamed image (qdq_mxfp4 and the
// GEMM at once, the GEMM waiting on per-piece flags): bit for bit the
// GEMM after the whole image, at the tiles it runs with (split-K in a
// cluster and through the workspace, BN 64 / 128 / 192, BK 256), ragged M
// (pieces of 8, 16 and 32 rows, partial last blocks), one to sixteen
// quantizer workgroups per SM; fresh activations every call on one stream
// (a flag left over would let a GEMM copy the previous call's image), the
// flags zero after every call; the QDQ reference; options refused.
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
#include "mxfp4/Ops/PreparedWeightImpl.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <memory>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class ImageStream : public SeededTest {};

/// The flags of the streamed image for M rows, read back.
std::vector<int32_t> flagsOf(Device &dev, const PreparedWeight &w, int64_t m) {
  Expected<void *> flags = w.impl().imageFlagsScratch(m);
  EXPECT_TRUE(bool(flags));
  if (!flags)
    return {};
  std::vector<int32_t> host(size_t((m + 127) / 128 * (w.k() / 128)), -1);
  EXPECT_FALSE(bool(dev.copyToHost(host.data(), *flags, host.size() * 4)));
  return host;
}

TEST_F(ImageStream, AgreesBitForBitWithTheWholeImage) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Case {
    int64_t n, k, m, splitK, bn, bk, perSm, stages = 0;
  };
  // The table's points (1536x7168 M = 512 / 128, 7168x768 M = 128), then
  // ragged M (pieces of 8 / 16 / 32 rows, a last block of 1 / 44 / 127
  // rows), three splits of 11 steps in a cluster (BN 128) and through the
  // workspace (BN 192), BK 256 (two chunks a step) and many quantizer
  // workgroups. BK 256 at BM 128 fits two stages.
  for (const Case &c : {Case{1536, 7168, 512, 2, 128, 0, 2}, Case{1536, 7168, 128, 4, 64, 0, 2},
                        Case{7168, 768, 128, 1, 64, 0, 1}, Case{1536, 7168, 300, 2, 128, 0, 4},
                        Case{2048, 4224, 129, 3, 128, 0, 2}, Case{7168, 768, 5, 1, 128, 0, 2},
                        Case{4096, 1024, 12, 2, 64, 0, 3}, Case{1536, 4224, 2047, 3, 192, 0, 16},
                        Case{2048, 2048, 255, 1, 128, 256, 1, 2}}) {
    SCOPED_TRACE(testing::Message()
                 << "N=" << c.n << " K=" << c.k << " M=" << c.m << " split-K=" << c.splitK
                 << " BN=" << c.bn << " BK=" << c.bk << " per SM=" << c.perSm << " seed=" << seed);
    HostWeights w = randomWeights(rng, c.n, c.k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, c.n, c.k);
    ASSERT_OK(prepared);
    std::vector<uint16_t> a = randomActivations(rng, c.m, c.k);
    DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(c.m * c.n * 2));
    da.upload(a);
    GemmA4W4Options o;
    o.overrides.bm = 128;
    o.overrides.preQuantize = true;
    o.overrides.splitK = c.splitK;
    o.overrides.bn = c.bn;
    if (c.bk)
      o.overrides.bk = c.bk;
    if (c.stages)
      o.overrides.stages = c.stages;
    o.overrides.imageStream = 0;
    auto whole = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3C);
    ASSERT_OK(whole);
    o.overrides.imageStream = c.perSm;
    auto streamed = poisonedGemm(dev, da, dc, c.m, c.n, **prepared, o, 0x3D);
    ASSERT_OK(streamed);
    EXPECT_EQ(bf16Differences(*streamed, *whole, "streamed", "whole image"), 0);
    std::vector<int32_t> flags = flagsOf(dev, **prepared, c.m);
    EXPECT_EQ(std::count(flags.begin(), flags.end(), 0), int64_t(flags.size()))
        << "the flags must be left zero";
    if (c.m <= 512)
      expectMatchesQdq(rng, a, w, c.m, *streamed);
  }
}

TEST_F(ImageStream, FreshActivationsEveryCallOnOneStream) {
  // Back to back on one stream without synchronizing, each call on new
  // activations (and M): a flag not taken back out would let the next
  // GEMM copy a piece before its quantizer rewrote it.
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 7168;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  const std::vector<int64_t> ms = {512, 100, 512, 384, 33, 512};
  std::vector<std::vector<uint16_t>> inputs;
  std::vector<std::unique_ptr<DeviceBuffer>> das, dcs;
  for (int64_t m : ms) {
    inputs.push_back(randomActivations(rng, m, k));
    das.push_back(std::make_unique<DeviceBuffer>(dev, inputs.back().size() * 2));
    das.back()->upload(inputs.back());
    dcs.push_back(std::make_unique<DeviceBuffer>(dev, size_t(m * n * 2)));
    dcs.back()->fill(0x3E);
  }
  ASSERT_FALSE(bool(dev.synchronize()));
  GemmA4W4Options o;
  o.overrides.bm = 128;
  o.overrides.preQuantize = true;
  o.overrides.splitK = 2;
  o.overrides.imageStream = 2;
  for (size_t i = 0; i < ms.size(); ++i)
    ASSERT_FALSE(bool(gemmA4W4(dev, nullptr, das[i]->get(), ms[i], **prepared, dcs[i]->get(), o)));
  ASSERT_FALSE(bool(dev.synchronize()));
  o.overrides.imageStream = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "call " << i << " M=" << ms[i] << " seed=" << seed);
    std::vector<uint16_t> streamed = dcs[i]->download<uint16_t>(size_t(ms[i] * n));
    auto whole = poisonedGemm(dev, *das[i], *dcs[i], ms[i], n, **prepared, o, 0x3F);
    ASSERT_OK(whole);
    EXPECT_EQ(bf16Differences(streamed, *whole, "streamed", "whole image"), 0);
  }
  std::vector<int32_t> flags = flagsOf(dev, **prepared, 512);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), 0), int64_t(flags.size()));
}

TEST_F(ImageStream, RefusesWhatItDoesNotStream) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 7168, m = 256;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  DeviceBuffer da(dev, size_t(m * k * 2)), dc(dev, size_t(m * n * 2));
  GemmA4W4Options o;
  o.overrides.bm = 128;
  o.overrides.preQuantize = true;
  o.overrides.imageStream = 17;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), o),
                        "1 to 16 quantizer workgroups per SM");
  o.overrides.imageStream = 2;
  o.overrides.persistent = true;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), o),
                        "a persistent grid");
  o.overrides.persistent = false;
  o.overrides.bm = 256;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), o), "BM 256");
  o.overrides.bm = 128;
  o.overrides.quantizerBm = 64;
  EXPECT_ERROR_CONTAINS(gemmA4W4(dev, nullptr, da.get(), m, **prepared, dc.get(), o),
                        "at most 32 rows");
}

} // namespace
