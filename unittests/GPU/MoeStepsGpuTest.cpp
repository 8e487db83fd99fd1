//===- MoeStepsGpuTest.cpp - The MoE elementwise steps on a GPU -----------===//
//
// Tier L2: skipped without a device.
//  - moeQuantizeRows writes, for every sorted row below num_valid, the CPU
//    quantizer's bytes of its token's row (all four roundings, adversarial
//    blocks), zero codes and scale 0x7F for padding rows and for the row's
//    padding to kMoeRowAlign, nothing past.
//  - moeActivationQuantize: the f32 activations (debug output) within a
//    float64 reference's tolerance for silu, swiglu and situv2, with and
//    without the routing weight, and codes/scales equal to the CPU
//    quantizer applied to those f32 values.
//  - moeReduce: the top-k weighted sum within BF16 rounding of a float64
//    reference, dropped slots skipped.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/MoeActivation.h"
#include "TestUtil/Random.h"
#include "mxfp4/Format/MoeSort.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Ops/MoeSteps.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class MoeSteps : public SeededTest {};

/// A routing of T tokens to topk distinct of E experts, sorted on the CPU.
MoeSortResult sortRandom(std::mt19937_64 &rng, const MoeSortShape &s) {
  std::vector<int32_t> ids(size_t(s.tokens * s.topk)), perm(size_t(s.experts));
  for (int64_t t = 0; t < s.tokens; ++t) {
    for (int64_t e = 0; e < s.experts; ++e)
      perm[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < s.topk; ++j) {
      std::swap(perm[size_t(j)], perm[size_t(j) + rng() % size_t(s.experts - j)]);
      ids[size_t(t * s.topk + j)] = perm[size_t(j)];
    }
  }
  std::vector<float> w(ids.size());
  for (float &x : w)
    x = float(rng() % 1000) / 1000.0f;
  auto r = moeSortReference(s, ids, w);
  EXPECT_TRUE(bool(r));
  return *r;
}

TEST_F(MoeSteps, GatheredQuantizationMatchesTheCpuQuantizer) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeSortShape shape{37, 4, 16, 8};
  const int64_t h = 160, hp = moePaddedRow(Arch::SM90A, h); // rows padded to 256
  for (ScaleRounding mode : allScaleRoundings()) {
    SCOPED_TRACE(testing::Message() << toString(mode) << " seed=" << seed);
    MoeSortResult sorted = sortRandom(rng, shape);
    std::vector<uint16_t> hidden = randomActivations(rng, shape.tokens, h);
    plantAdversarialBlocks(hidden, shape.tokens, h);
    const int64_t rows = int64_t(sorted.sortedIds.size()), valid = sorted.numValid[0];
    DeviceBuffer dh(dev, hidden.size() * 2), ids(dev, size_t(rows) * 4), nv(dev, 8),
        codes(dev, size_t(rows * hp / 2)), scales(dev, size_t(rows * hp / 32));
    dh.upload(hidden);
    ids.upload(sorted.sortedIds);
    nv.upload(std::vector<int32_t>{sorted.numValid[0], sorted.numValid[1]});
    codes.fill(0xAA);
    scales.fill(0xAA);
    ASSERT_OK(moeQuantizeRows(dev, nullptr, dh.get(), shape.tokens, h,
                              static_cast<int32_t *>(ids.get()), static_cast<int32_t *>(nv.get()),
                              rows, codes.get(), scales.get(), mode));
    ASSERT_OK(dev.synchronize());
    auto gotCodes = codes.download<uint8_t>(size_t(rows * hp / 2));
    auto gotScales = scales.download<uint8_t>(size_t(rows * hp / 32));
    auto cpu = quantizeBf16(hidden, shape.tokens, h, mode);
    ASSERT_OK(cpu);
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t token = sorted.sortedIds[size_t(r)] & 0xFFFFFF;
      for (int64_t b = 0; b < hp / 32; ++b) {
        const bool real = token < shape.tokens && b < h / 32;
        uint8_t wantScale = r >= valid ? 0xAA
                            : real     ? cpu->scales[size_t(token * h / 32 + b)]
                                       : 0x7F;
        ASSERT_EQ(gotScales[size_t(r * hp / 32 + b)], wantScale) << "row " << r << " block " << b;
        for (int64_t j = 0; j < 16; ++j) {
          uint8_t want = r >= valid ? 0xAA
                         : real     ? cpu->data[size_t(token * h / 2 + b * 16 + j)]
                                    : 0;
          ASSERT_EQ(gotCodes[size_t(r * hp / 2 + b * 16 + j)], want)
              << "row " << r << " byte " << j;
        }
      }
    }
  }
}

TEST_F(MoeSteps, ActivationQuantization) {
  OPEN_DEVICE_OR_SKIP(dev);
  // inter 96: rows padded to 256 (gate_up rows 512 wide, gate and up
  // columns paired in groups of 16: moe_gemm's layout).
  const int64_t inter = 96, ip = moePaddedRow(Arch::SM90A, inter), rows = 40, valid = 33;
  const MoeActivation acts[] = {{Activation::Silu, 0, 0},
                                swigluGptOss(),
                                {Activation::Situv2, 2.0f, 1.5f},
                                {Activation::Situv2, 4.0f, 25.0f}};
  for (const MoeActivation &act : acts)
    for (bool doweight : {false, true})
      for (ScaleRounding mode : {ScaleRounding::RoundUp, ScaleRounding::Nearest}) {
        SCOPED_TRACE(testing::Message() << toString(act.kind) << " doweight=" << doweight << " "
                                        << toString(mode) << " seed=" << seed);
        std::vector<uint16_t> gu = randomBf16(rng, size_t(rows * 2 * ip), 3.0f);
        std::vector<float> w(static_cast<size_t>(rows));
        for (float &x : w)
          x = float(rng() % 1000) / 1000.0f;
        DeviceBuffer dgu(dev, gu.size() * 2), dw(dev, w.size() * 4), nv(dev, 8),
            codes(dev, size_t(rows * ip / 2)), scales(dev, size_t(rows * ip / 32)),
            debug(dev, size_t(rows * inter) * 4);
        dgu.upload(gu);
        dw.upload(w);
        nv.upload(std::vector<int32_t>{int32_t(valid), 1});
        codes.fill(0xAA);
        scales.fill(0xAA);
        ASSERT_OK(moeActivationQuantize(dev, nullptr, dgu.get(), static_cast<float *>(dw.get()),
                                        static_cast<int32_t *>(nv.get()), rows, inter, act,
                                        doweight, codes.get(), scales.get(),
                                        static_cast<float *>(debug.get()), mode));
        ASSERT_OK(dev.synchronize());
        auto got = debug.download<float>(size_t(valid * inter));
        for (int64_t r = 0; r < valid; ++r)
          for (int64_t c = 0; c < inter; ++c) {
            double scale = doweight ? double(w[size_t(r)]) : 1.0;
            const int64_t gate = (c / 8) * 16 + c % 8;
            double g = double(bf16ToFloat(gu[size_t(r * 2 * ip + gate)])) * scale;
            double u = double(bf16ToFloat(gu[size_t(r * 2 * ip + gate + 8)])) * scale;
            double ref = moeActivation(act, g, u);
            double tol = 2e-6 * (1.0 + std::fabs(g)) * (1.0 + std::fabs(u)) + 1e-6 * std::fabs(ref);
            ASSERT_NEAR(got[size_t(r * inter + c)], ref, tol) << "row " << r << " col " << c;
          }
        auto cpu = quantizeF32(got, valid, inter, mode);
        ASSERT_OK(cpu);
        auto gotCodes = codes.download<uint8_t>(size_t(rows * ip / 2));
        auto gotScales = scales.download<uint8_t>(size_t(rows * ip / 32));
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t b = 0; b < ip / 32; ++b) {
            const bool real = r < valid && b < inter / 32;
            uint8_t wantScale = r >= valid ? 0xAA
                                : real     ? cpu->scales[size_t(r * inter / 32 + b)]
                                           : 0x7F;
            ASSERT_EQ(gotScales[size_t(r * ip / 32 + b)], wantScale)
                << "row " << r << " block " << b;
            for (int64_t j = 0; j < 16; ++j) {
              uint8_t want = r >= valid ? 0xAA
                             : real     ? cpu->data[size_t(r * inter / 2 + b * 16 + j)]
                                        : 0;
              ASSERT_EQ(gotCodes[size_t(r * ip / 2 + b * 16 + j)], want)
                  << "row " << r << " byte " << j;
            }
          }
        }
      }
}

TEST_F(MoeSteps, ReduceSumsTheSlots) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeSortShape shape{29, 6, 32, 16};
  const int64_t h = 136, hp = moePaddedRow(Arch::SM90A, h); // y rows padded to 256
  for (auto [useWeights, withBias] :
       {std::pair{true, false}, std::pair{false, false}, std::pair{true, true}}) {
    SCOPED_TRACE(testing::Message()
                 << "weights=" << useWeights << " bias=" << withBias << " seed=" << seed);
    MoeSortResult sorted = sortRandom(rng, shape);
    std::vector<int32_t> positions = sorted.positions;
    positions[3] = -1; // a dropped slot
    std::vector<float> w(positions.size());
    for (float &x : w)
      x = float(rng() % 1000) / 1000.0f;
    const int64_t rows = int64_t(sorted.sortedIds.size());
    std::vector<uint16_t> y = randomBf16(rng, size_t(rows * hp));
    DeviceBuffer dy(dev, y.size() * 2), dw(dev, w.size() * 4), dp(dev, positions.size() * 4),
        out(dev, size_t(shape.tokens * h * 2));
    // The bias of each slot's expert ([E, H]), found through its sorted
    // row's block (moeSort's block experts).
    std::vector<float> bias(size_t(shape.experts * h));
    for (float &x : bias)
      x = float(int(rng() % 2001) - 1000) / 250.0f;
    DeviceBuffer db(dev, bias.size() * 4), de(dev, sorted.expertIds.size() * 4);
    db.upload(bias);
    de.upload(sorted.expertIds);
    dy.upload(y);
    dw.upload(w);
    dp.upload(positions);
    out.fill(0xFF);
    MoeRowBias rowBias;
    if (withBias)
      rowBias = {static_cast<float *>(db.get()), static_cast<int32_t *>(de.get()), shape.blockM};
    ASSERT_OK(moeReduce(dev, nullptr, dy.get(), static_cast<float *>(dw.get()),
                        static_cast<int32_t *>(dp.get()), shape.tokens, shape.topk, h, useWeights,
                        out.get(), std::nullopt, rowBias));
    ASSERT_OK(dev.synchronize());
    auto got = out.download<uint16_t>(size_t(shape.tokens * h));
    for (int64_t t = 0; t < shape.tokens; ++t)
      for (int64_t c = 0; c < h; ++c) {
        double ref = 0, mag = 0;
        for (int64_t s = 0; s < shape.topk; ++s) {
          int32_t p = positions[size_t(t * shape.topk + s)];
          if (p < 0)
            continue;
          double wt = useWeights ? double(w[size_t(t * shape.topk + s)]) : 1.0;
          const int32_t e = sorted.expertIds[size_t(p / shape.blockM)];
          double b = withBias ? double(bias[size_t(e * h + c)]) : 0.0;
          double v = wt * (double(bf16ToFloat(y[size_t(p * hp + c)])) + b);
          ref += v;
          mag += std::fabs(v);
        }
        double g = double(bf16ToFloat(got[size_t(t * h + c)]));
        ASSERT_NEAR(g, ref, std::fabs(ref) * 0x1p-8 + mag * 1e-6 + 1e-30)
            << "token " << t << " col " << c;
      }
  }
}

TEST_F(MoeSteps, RejectBadInput) {
  OPEN_DEVICE_OR_SKIP(dev);
  DeviceBuffer b(dev, 4096);
  void *p = b.get();
  auto *i = static_cast<int32_t *>(p);
  auto *f = static_cast<float *>(p);
  EXPECT_ERROR_CONTAINS(moeQuantizeRows(dev, nullptr, p, 1, 100, i, i, 1, p, p), "multiple of 32");
  EXPECT_ERROR_CONTAINS(moeQuantizeRows(dev, nullptr, nullptr, 1, 64, i, i, 1, p, p), "null");
  EXPECT_ERROR_CONTAINS(moeActivationQuantize(dev, nullptr, p, f, i, 1, 64,
                                              {Activation::Situv2, 0.0f, 1.0f}, false, p, p),
                        "situv2 takes finite beta");
  EXPECT_ERROR_CONTAINS(moeActivationQuantize(dev, nullptr, p, f, i, 1, 64,
                                              {Activation::None, 0.0f, 0.0f}, false, p, p),
                        "must be gated");
  EXPECT_ERROR_CONTAINS(moeReduce(dev, nullptr, p, f, i, 1, 0, 64, true, p), "topk");
  EXPECT_ERROR_CONTAINS(
      moeReduce(dev, nullptr, p, f, i, 1, 2, 64, true, p, std::nullopt, {f, i, 24}),
      "the bias's blockM must be 16, 32, 64 or 128, got 24");
  EXPECT_ERROR_CONTAINS(
      moeReduce(dev, nullptr, static_cast<char *>(p) + 2, f, i, 1, 2, 64, true, p),
      "4-byte aligned");
}

} // namespace
