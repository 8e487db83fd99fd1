//===- QuantizeMxGpuTest.cpp - quant_mxfp4 and gemm_mxa4w4 on a GPU --------===//
//
// Tier L2: skipped without a device. The quantizer kernel and the GEMM on
// already-quantized activations, through the public API:
//
//  - quantizeMxfp4 writes the CPU quantizer's codes and scales byte for byte
//    (all four rounding modes, adversarial blocks, blocks of every scale,
//    ragged M) and nothing past row M;
//  - qdqMxfp4 writes the dequantized values into the activation image, bit
//    for bit, and not the image's padding rows;
//  - gemmA4W4 through qdq_mxfp4 + gemm_qdqa4w4 and through quant_mxfp4 +
//    gemm_mxa4w4 is bit-identical to the inline-quantizing kernel (same
//    dequantized operands, same MMA order), BM 128 included, and at large M
//    (BM 128 and 256 on the image) call after call;
//  - gemmMxA4W4 on activations quantized on the CPU matches the float64
//    reference within (K * 2^-24 + 2^-8) * sum_k |a_k w_k|;
//  - bad input is rejected with a clear error.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Bf16Compare.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/PoisonedGemm.h"
#include "TestUtil/Random.h"
#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class QuantizeMx : public SeededTest {};

/// The index of the first differing byte, or -1.
int64_t firstDifference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i])
      return int64_t(i);
  return a.size() == b.size() ? -1 : int64_t(std::min(a.size(), b.size()));
}

TEST_F(QuantizeMx, MatchesTheCpuQuantizer) {
  OPEN_DEVICE_OR_SKIP(dev);
  // (K, M); 7168 x 1001 takes qdq_mxfp4's BM 64 blocks (bulk copies).
  std::vector<std::pair<int64_t, int64_t>> shapes{{7168, 1001}};
  for (int64_t k : {768, 1024})
    for (int64_t m : {1, 7, 33, 64, 129, 300})
      shapes.push_back({k, m});
  for (auto [k, m] : shapes)
    for (ScaleRounding mode : allScaleRoundings()) {
      SCOPED_TRACE(testing::Message()
                   << std::string(toString(mode)) << " M=" << m << " K=" << k << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      plantAdversarialBlocks(a, m, k);
      plantScaleSweep(rng, a, m, k);
      // One guard row after each output: must keep its poison.
      DeviceBuffer da(dev, a.size() * 2), codes(dev, size_t((m + 1) * k / 2)),
          scales(dev, size_t((m + 1) * k / 32));
      da.upload(a);
      codes.fill(0xAA);
      scales.fill(0xAA);
      ASSERT_OK(quantizeMxfp4(dev, nullptr, da.get(), m, k, codes.get(), scales.get(), mode));
      ASSERT_OK(dev.synchronize());
      auto cpu = quantizeBf16(a, m, k, mode);
      ASSERT_OK(cpu);
      std::vector<uint8_t> gotCodes = codes.download<uint8_t>(size_t((m + 1) * k / 2));
      std::vector<uint8_t> gotScales = scales.download<uint8_t>(size_t((m + 1) * k / 32));
      for (size_t i = size_t(m * k / 2); i < gotCodes.size(); ++i)
        ASSERT_EQ(gotCodes[i], 0xAA) << "wrote codes past row M";
      for (size_t i = size_t(m * k / 32); i < gotScales.size(); ++i)
        ASSERT_EQ(gotScales[i], 0xAA) << "wrote scales past row M";
      gotCodes.resize(size_t(m * k / 2));
      gotScales.resize(size_t(m * k / 32));
      EXPECT_EQ(firstDifference(gotScales, cpu->scales), -1) << "E8M0 scales differ";
      EXPECT_EQ(firstDifference(gotCodes, cpu->data), -1) << "E2M1 codes differ";

      // qdq_mxfp4: the values those codes and scales stand for, as bf16
      // (exact; NaN where the scale is NaN), in the activation image; the
      // padding rows of the last 128-row block keep their poison, but for
      // those of the last 8-row group, which may be zero (whole groups
      // copied).
      const size_t image = size_t(sm90::activationImageElements(m, k));
      DeviceBuffer qdq(dev, image * 2);
      qdq.fill(0xAA);
      ASSERT_OK(qdqMxfp4(dev, nullptr, da.get(), m, k, qdq.get(), mode));
      ASSERT_OK(dev.synchronize());
      std::vector<uint16_t> gotQdq = qdq.download<uint16_t>(image);
      std::vector<uint16_t> want(image, 0xAAAA);
      for (int64_t r = 0; r < (m + 7) / 8 * 8; ++r)
        for (int64_t c = 0; c < k; ++c) {
          const size_t at = size_t(sm90::activationImageIndex(r, c, k));
          want[at] = r < m ? floatToBf16(float(cpu->at(r, c)))
                           : (gotQdq[at] == 0 ? uint16_t(0) : uint16_t(0xAAAA));
        }
      EXPECT_EQ(bf16Differences(gotQdq, want, "qdq_mxfp4", "CPU", /*nanMatchesNaN=*/true), 0)
          << "the activation image differs";
    }
}

TEST_F(QuantizeMx, PreQuantizedGemmIsBitIdenticalToInline) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 1024;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  for (ScaleRounding mode : {ScaleRounding::RoundUp, ScaleRounding::Floor})
    for (int64_t m : {1, 8, 63, 64, 129, 300})
    for (int64_t bm : {0, 16, 32, 64, 128}) { // the table's tile, then each tile
      SCOPED_TRACE(testing::Message() << std::string(toString(mode)) << " M=" << m << " BM=" << bm
                                      << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, k);
      plantAdversarialBlocks(a, m, k);
      DeviceBuffer da(dev, a.size() * 2), inl(dev, size_t(m * n * 2)), pre(dev, size_t(m * n * 2));
      da.upload(a);
      inl.fill(0xFF);
      pre.fill(0x7F);
      GemmA4W4Options o;
      o.rounding = mode;
      if (bm)
        o.overrides.bm = bm;
      o.overrides.preQuantize = false;
      ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), m, **prepared, inl.get(), o));
      o.overrides.preQuantize = true; // dequantized once (qdq_mxfp4 + gemm_qdqa4w4)
      ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), m, **prepared, pre.get(), o));
      ASSERT_OK(dev.synchronize());
      std::vector<uint16_t> x = inl.download<uint16_t>(size_t(m * n)),
                            y = pre.download<uint16_t>(size_t(m * n));
      EXPECT_EQ(bf16Differences(y, x, "dequantized once", "inline", /*nanMatchesNaN=*/true), 0)
          << "outputs differ";
      o.overrides.dequantizeOnce = false; // codes and scales (quant_mxfp4 + gemm_mxa4w4)
      pre.fill(0x7E);
      ASSERT_OK(gemmA4W4(dev, nullptr, da.get(), m, **prepared, pre.get(), o));
      ASSERT_OK(dev.synchronize());
      y = pre.download<uint16_t>(size_t(m * n));
      EXPECT_EQ(bf16Differences(y, x, "pre-quantized", "inline", /*nanMatchesNaN=*/true), 0)
          << "outputs differ";
    }
}

// At the seed's large M, where the image path takes BM 128 and BM 256
// tiles, call after call with fresh inputs: bit for bit the inline kernel.
TEST_F(QuantizeMx, PreQuantizedGemmAtLargeMIsBitIdenticalToInline) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Shape {
    int64_t n, k;
  };
  for (Shape s : {Shape{1536, 7168}, Shape{7168, 4224}}) {
    HostWeights w = randomWeights(rng, s.n, s.k);
    auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, s.n, s.k);
    ASSERT_OK(prepared);
    for (int64_t m : {2048, 1000, 2048}) {
      SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " M=" << m
                                      << " seed=" << seed);
      std::vector<uint16_t> a = randomActivations(rng, m, s.k);
      DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t(m * s.n * 2));
      da.upload(a);
      GemmA4W4Options o; // the table's tile: the image, BM 128 or 256
      auto pre = poisonedGemm(dev, da, dc, m, s.n, **prepared, o, 0x7F);
      ASSERT_OK(pre);
      o.overrides.preQuantize = false;
      o.overrides.bm = 128;
      auto inl = poisonedGemm(dev, da, dc, m, s.n, **prepared, o, 0xFF);
      ASSERT_OK(inl);
      EXPECT_EQ(bf16Differences(*pre, *inl, "on the image", "inline", /*nanMatchesNaN=*/true), 0)
          << "outputs differ";
    }
  }
}

TEST_F(QuantizeMx, GemmOnCpuQuantizedActivationsMatchesTheReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 1536, k = 768;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  for (int64_t m : {1, 13, 77, 260}) {
    SCOPED_TRACE(testing::Message() << "M=" << m << " seed=" << seed);
    std::vector<uint16_t> a = randomActivations(rng, m, k);
    auto qa = quantizeBf16(a, m, k, ScaleRounding::Even);
    ASSERT_OK(qa);
    DeviceBuffer codes(dev, qa->data.size()), scales(dev, qa->scales.size()),
        dc(dev, size_t((m + 1) * n * 2));
    codes.upload(qa->data);
    scales.upload(qa->scales);
    dc.fill(0xFF);
    ASSERT_OK(gemmMxA4W4(dev, nullptr, codes.get(), scales.get(), m, **prepared, dc.get()));
    ASSERT_OK(dev.synchronize());
    std::vector<uint16_t> c = dc.download<uint16_t>(size_t((m + 1) * n));
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(c[size_t(m * n + j)], 0xFFFF) << "wrote past row M at column " << j;
    auto ref = referenceGemm(*qa, w.mx());
    ASSERT_OK(ref);
    const double tol = double(k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
    int64_t bad = 0;
    for (size_t i = 0; i < ref->c.size(); ++i) {
      double got = bf16ToFloat(c[i]);
      if (!std::isfinite(got) || std::fabs(got - ref->c[i]) > tol * ref->absSum[i])
        if (bad++ < 5)
          ADD_FAILURE() << "element " << i << ": gpu " << got << " ref " << ref->c[i];
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST_F(QuantizeMx, ApiRejectsBadInput) {
  OPEN_DEVICE_OR_SKIP(dev);
  const int64_t n = 256, k = 512;
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  DeviceBuffer da(dev, 4 * k * 2), codes(dev, 4 * k / 2), scales(dev, 4 * k / 32),
      dc(dev, 4 * n * 2);
  char *codesPtr = static_cast<char *>(codes.get());
  EXPECT_ERROR_CONTAINS(quantizeMxfp4(dev, nullptr, da.get(), 0, k, codes.get(), scales.get()),
                        "M must be >= 1");
  EXPECT_ERROR_CONTAINS(quantizeMxfp4(dev, nullptr, da.get(), 4, k, nullptr, scales.get()), "null");
  EXPECT_ERROR_CONTAINS(quantizeMxfp4(dev, nullptr, da.get(), 4, k, codesPtr + 2, scales.get()),
                        "4-byte aligned");
  EXPECT_ERROR_CONTAINS(quantizeMxfp4(dev, nullptr, da.get(), 4, 100, codes.get(), scales.get()),
                        "divide K = 100");
  DeviceBuffer qdq(dev, 4 * k * 2);
  char *qdqPtr = static_cast<char *>(qdq.get());
  EXPECT_ERROR_CONTAINS(qdqMxfp4(dev, nullptr, da.get(), 4, k, nullptr),
                        "qdqMxfp4: the input and output pointers must not be null");
  EXPECT_ERROR_CONTAINS(qdqMxfp4(dev, nullptr, da.get(), 4, k, qdqPtr + 8),
                        "output pointer must be 16-byte aligned");
  EXPECT_ERROR_CONTAINS(qdqMxfp4(dev, nullptr, da.get(), 0, k, qdq.get()), "M must be >= 1");
  EXPECT_ERROR_CONTAINS(
      gemmMxA4W4(dev, nullptr, codesPtr + 1, scales.get(), 4, **prepared, dc.get()),
      "4-byte aligned");
  EXPECT_ERROR_CONTAINS(gemmMxA4W4(dev, nullptr, codes.get(), nullptr, 4, **prepared, dc.get()),
                        "null");
  GemmA4W4Options dump;
  dump.dumpCodes = codes.get();
  dump.dumpScales = scales.get();
  EXPECT_ERROR_CONTAINS(
      gemmMxA4W4(dev, nullptr, codes.get(), scales.get(), 4, **prepared, dc.get(), dump),
      "nothing to dump");
}

} // namespace
