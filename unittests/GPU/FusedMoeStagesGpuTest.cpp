//===- FusedMoeStagesGpuTest.cpp - The MoE stages alone on a GPU ----------===//
//
// Tier L2: skipped without a device. moeStage1 and moeStage2 on a CPU
// sorting (moeSortReference):
//  - stage 2, reduced and atomic: random MXFP4 rows times W2 and the
//    weighted slot sums against float64, within the bf16 roundings;
//  - stage 1, fused and not: codes and scales byte for byte the CPU
//    quantizer of the f32 activations the kernel reports (its debug
//    output), those activations against float64 within f32 accumulation,
//    padding blocks and rows past num_valid as specified; and the
//    quantized activations against the CPU quantizer of the float64 ones.
//
//===----------------------------------------------------------------------===//

#include "MoeLayer.h"
#include "mxfp4/Format/MoeSort.h"

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class MoeStages : public SeededTest {};

/// Stage 2 alone on a CPU sorting: random MXFP4 rows times W2, the slots
/// summed with their weights; f32 accumulation against float64, so the
/// distance is the BF16 rounding of each slot's row and of the sum.
TEST_F(MoeStages, Stage2MatchesTheReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{4, 2, 256, 256};
  const int64_t tokens = 20;
  Case c(dev, rng, s, tokens);
  ASSERT_TRUE(c.weights);
  for (int64_t bm : {16, 64, 128}) {
    SCOPED_TRACE(testing::Message() << "block_m " << bm << " seed=" << seed);
    auto sorted =
        moeSortReference({tokens, s.topk, s.experts, bm}, c.routing.ids, c.routing.weights, {});
    ASSERT_OK(sorted);
    const int64_t rows = moeMaxRows(s, tokens, bm), ip = moePaddedRow(Arch::SM90A, s.inter);
    std::vector<uint8_t> codes = randomBytes(rng, size_t(rows * ip / 2));
    std::vector<uint8_t> scales = randomScales(rng, size_t(rows * ip / 32), 119, 124);
    DeviceBuffer dIds(dev, sorted->sortedIds.size() * 4), dW(dev, sorted->sortedWeights.size() * 4),
        dE(dev, sorted->expertIds.size() * 4), dV(dev, 8), dPos(dev, sorted->positions.size() * 4),
        dCodes(dev, codes.size()), dScales(dev, scales.size());
    dIds.upload(sorted->sortedIds);
    dW.upload(sorted->sortedWeights);
    dE.upload(sorted->expertIds);
    dV.upload(std::vector<int32_t>{sorted->numValid[0], sorted->numValid[1]});
    dPos.upload(sorted->positions);
    dCodes.upload(codes);
    dScales.upload(scales);
    MoeSorted ms{static_cast<int32_t *>(dIds.get()), static_cast<float *>(dW.get()),
                 static_cast<int32_t *>(dE.get()), static_cast<int32_t *>(dV.get()), bm};
    std::vector<double> ref(size_t(tokens * s.hidden), 0.0), absSum(ref.size(), 0.0);
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < s.topk; ++j) {
        const int64_t slot = t * s.topk + j, pos = sorted->positions[size_t(slot)];
        const int64_t e = c.routing.ids[size_t(slot)];
        for (int64_t h = 0; h < s.hidden; ++h) {
          double y = 0;
          for (int64_t i = 0; i < s.inter; ++i)
            y += HostLayer::at(codes, scales, ip, pos, i) *
                 HostLayer::at(c.layer.w2, c.layer.s2, s.inter, e * s.hidden + h, i);
          ref[size_t(t * s.hidden + h)] += double(c.routing.weights[size_t(slot)]) * y;
          absSum[size_t(t * s.hidden + h)] +=
              std::fabs(double(c.routing.weights[size_t(slot)]) * y);
        }
      }
    for (MoeCombine combine : {MoeCombine::Reduce, MoeCombine::Atomic}) {
      SCOPED_TRACE(testing::Message() << "atomic=" << (combine == MoeCombine::Atomic));
      FusedMoeOptions o;
      o.activation = {Activation::Silu, 0, 0};
      o.combine = combine;
      c.out.fill(0xFF);
      ASSERT_OK(moeStage2(dev, nullptr, dCodes.get(), dScales.get(), tokens, ms,
                          static_cast<int32_t *>(dPos.get()), static_cast<float *>(c.tw.get()),
                          *c.weights, o, c.out.get()));
      ASSERT_OK(dev.synchronize());
      std::vector<uint16_t> got = c.result();
      int shown = 0;
      for (size_t i = 0; i < got.size() && shown < 8; ++i) {
        const double x = double(bf16ToFloat(got[i]));
        // Reduce rounds each slot's row to BF16 before the f32 sum, both
        // round the sum: 2^-8 of the terms' magnitudes bounds it.
        if (!(std::fabs(x - ref[i]) <= std::ldexp(absSum[i] + std::fabs(ref[i]), -8) + 1e-30)) {
          ++shown;
          ADD_FAILURE() << "token " << i / size_t(s.hidden) << " column " << i % size_t(s.hidden)
                        << ": got " << x << ", want " << ref[i];
        }
      }
      EXPECT_LE(distance(got, ref).relL2, 4e-3);
    }
  }
}

/// Stage 1 alone on a CPU sorting: each valid sorted row's quantized
/// activation against the CPU quantizer applied to the float64 activation
/// of the QDQ hidden row (the kernel rounds gate and up to BF16 first, so
/// a few codes may land in the neighbouring bin; most are equal).
TEST_F(MoeStages, Stage1MatchesTheReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{4, 2, 256, 256};
  const int64_t tokens = 20, bm = 16;
  Case c(dev, rng, s, tokens);
  ASSERT_TRUE(c.weights);
  auto sorted =
      moeSortReference({tokens, s.topk, s.experts, bm}, c.routing.ids, c.routing.weights, {});
  ASSERT_OK(sorted);
  const int64_t rows = moeMaxRows(s, tokens, bm), ip = moePaddedRow(Arch::SM90A, s.inter);
  DeviceBuffer dIds(dev, sorted->sortedIds.size() * 4), dW(dev, sorted->sortedWeights.size() * 4),
      dE(dev, sorted->expertIds.size() * 4), dV(dev, 8), dCodes(dev, size_t(rows * ip / 2)),
      dScales(dev, size_t(rows * ip / 32));
  dIds.upload(sorted->sortedIds);
  dW.upload(sorted->sortedWeights);
  dE.upload(sorted->expertIds);
  dV.upload(std::vector<int32_t>{sorted->numValid[0], sorted->numValid[1]});
  MoeSorted ms{static_cast<int32_t *>(dIds.get()), static_cast<float *>(dW.get()),
               static_cast<int32_t *>(dE.get()), static_cast<int32_t *>(dV.get()), bm};
  FusedMoeOptions o;
  o.activation = {Activation::Silu, 0, 0};
  ASSERT_OK(
      moeStage1(dev, nullptr, c.dh.get(), tokens, ms, *c.weights, o, dCodes.get(), dScales.get()));
  ASSERT_OK(dev.synchronize());
  std::vector<uint8_t> codes = dCodes.download<uint8_t>(size_t(rows * ip / 2));
  std::vector<uint8_t> scales = dScales.download<uint8_t>(size_t(rows * ip / 32));
  std::vector<double> a = dequantize(*quantizeBf16(c.hidden, tokens, s.hidden, o.rounding));
  int64_t equal = 0, total = 0;
  int shown = 0;
  std::vector<float> act(size_t(s.inter));
  for (int64_t r = 0; r < sorted->numValid[0]; ++r) {
    const int32_t id = sorted->sortedIds[size_t(r)];
    const int64_t t = id & 0xFFFFFF, slot = id >> 24;
    if (t >= tokens)
      continue;
    const int64_t e = c.routing.ids[size_t(t * s.topk + slot)];
    for (int64_t i = 0; i < s.inter; ++i) {
      double g = 0, u = 0;
      for (int64_t k = 0; k < s.hidden; ++k) {
        const double x = a[size_t(t * s.hidden + k)];
        g += x * HostLayer::at(c.layer.w1, c.layer.s1, s.hidden, e * 2 * s.inter + i, k);
        u += x * HostLayer::at(c.layer.w1, c.layer.s1, s.hidden, e * 2 * s.inter + s.inter + i, k);
      }
      act[size_t(i)] = float(moeActivation(o.activation, g, u));
    }
    std::vector<double> want = dequantize(*quantizeF32(act, 1, s.inter, o.rounding));
    for (int64_t i = 0; i < s.inter; ++i) {
      const double got = HostLayer::at(codes, scales, ip, r, i);
      ++total;
      if (got == want[size_t(i)] || (std::isnan(got) && std::isnan(want[size_t(i)]))) {
        ++equal;
      } else if (shown < 8) {
        ++shown;
        std::printf("  stage 1 row %lld (token %lld, expert %lld) column %lld: got %g, want %g "
                    "(activation %g)\n",
                    (long long)r, (long long)t, (long long)e, (long long)i, got, want[size_t(i)],
                    double(act[size_t(i)]));
      }
    }
  }
  std::printf("  stage 1: %lld of %lld values equal\n", (long long)equal, (long long)total);
  EXPECT_GE(double(equal), 0.95 * double(total));
}

/// Stage 1 alone, fused and not, with its debug output: the codes and
/// scales are the CPU quantizer applied to the f32 activations the kernel
/// reports, byte for byte (padding blocks zero codes with scale 1.0, rows
/// past num_valid untouched), and those activations are the float64
/// activation of the QDQ GEMM within f32 accumulation. Shapes: ragged
/// inter (blocks of padding), K split in 4 (the sum before the epilogue),
/// block_m 64 and 128 (two warpgroups), doweight and every rounding.
TEST_F(MoeStages, Stage1BytesAreTheCpuQuantizersOfItsActivations) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Shape {
    MoeShape s;
    int64_t tokens, bm;
  };
  const Shape shapes[] = {{{4, 2, 256, 96}, 20, 16},
                          {{8, 2, 1024, 1024}, 2, 16},
                          {{6, 3, 512, 160}, 70, 64},
                          {{4, 2, 256, 256}, 150, 128}};
  const MoeActivation acts[] = {{Activation::Silu, 0, 0}, swigluGptOss(), kSitu};
  const ScaleRounding modes[] = {ScaleRounding::RoundUp, ScaleRounding::Even, ScaleRounding::Floor,
                                 ScaleRounding::Nearest};
  int run = 0;
  for (const Shape &sh : shapes) {
    const MoeShape &s = sh.s;
    Case c(dev, rng, s, sh.tokens);
    ASSERT_TRUE(c.weights);
    auto sorted = moeSortReference({sh.tokens, s.topk, s.experts, sh.bm}, c.routing.ids,
                                   c.routing.weights, {});
    ASSERT_OK(sorted);
    const int64_t rows = moeMaxRows(s, sh.tokens, sh.bm), ip = moePaddedRow(Arch::SM90A, s.inter);
    const int64_t valid = sorted->numValid[0];
    DeviceBuffer dIds(dev, sorted->sortedIds.size() * 4), dW(dev, sorted->sortedWeights.size() * 4),
        dE(dev, sorted->expertIds.size() * 4), dV(dev, 8), dCodes(dev, size_t(rows * ip / 2)),
        dScales(dev, size_t(rows * ip / 32)), dDebug(dev, size_t(rows * s.inter) * 4);
    dIds.upload(sorted->sortedIds);
    dW.upload(sorted->sortedWeights);
    dE.upload(sorted->expertIds);
    dV.upload(std::vector<int32_t>{sorted->numValid[0], sorted->numValid[1]});
    MoeSorted ms{static_cast<int32_t *>(dIds.get()), static_cast<float *>(dW.get()),
                 static_cast<int32_t *>(dE.get()), static_cast<int32_t *>(dV.get()), sh.bm};
    for (bool fuse : {true, false})
      for (size_t ai = 0; ai < std::size(acts); ++ai) {
        const ScaleRounding mode = modes[size_t(run++) % std::size(modes)];
        const bool doweight = run % 2;
        SCOPED_TRACE(testing::Message()
                     << "E " << s.experts << " H " << s.hidden << " inter " << s.inter << " T "
                     << sh.tokens << " block_m " << sh.bm << " " << toString(acts[ai].kind)
                     << (fuse ? " fused" : " unfused") << " " << toString(mode)
                     << " doweight=" << doweight << " seed=" << seed);
        FusedMoeOptions o;
        o.activation = acts[ai];
        o.fuseActivation = fuse;
        o.doweightStage1 = doweight;
        o.rounding = mode;
        dCodes.fill(0xAA);
        dScales.fill(0xAA);
        dDebug.fill(0xFF);
        ASSERT_OK(moeStage1(dev, nullptr, c.dh.get(), sh.tokens, ms, *c.weights, o, dCodes.get(),
                            dScales.get(), static_cast<float *>(dDebug.get())));
        ASSERT_OK(dev.synchronize());
        std::vector<float> act = dDebug.download<float>(size_t(valid * s.inter));
        auto cpu = quantizeF32(act, valid, s.inter, mode);
        ASSERT_OK(cpu);
        std::vector<uint8_t> codes = dCodes.download<uint8_t>(size_t(rows * ip / 2));
        std::vector<uint8_t> scales = dScales.download<uint8_t>(size_t(rows * ip / 32));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t b = 0; b < ip / 32; ++b) {
            const bool real = r < valid && b < s.inter / 32;
            const uint8_t wantScale = r >= valid ? 0xAA
                                      : real     ? cpu->scales[size_t(r * s.inter / 32 + b)]
                                                 : 0x7F;
            ASSERT_EQ(scales[size_t(r * ip / 32 + b)], wantScale) << "row " << r << " block " << b;
            for (int64_t j = 0; j < 16; ++j) {
              const uint8_t want = r >= valid ? 0xAA
                                   : real     ? cpu->data[size_t(r * s.inter / 2 + b * 16 + j)]
                                              : 0;
              ASSERT_EQ(codes[size_t(r * ip / 2 + b * 16 + j)], want)
                  << "row " << r << " block " << b << " byte " << j;
            }
          }
        // The activations: float64 from the QDQ hidden rows, the exact
        // weights and the routing weight; f32 sums of H products are
        // within H 2^-24 of the sum of magnitudes (bf16 gate/up rounding,
        // unfused: 2^-8 more), the activation's own few ulp on top.
        std::vector<double> a = dequantize(*quantizeBf16(c.hidden, sh.tokens, s.hidden, mode));
        int shown = 0;
        for (int64_t r = 0; r < valid && shown < 5; ++r) {
          const int32_t id = sorted->sortedIds[size_t(r)];
          const int64_t t = id & 0xFFFFFF, slot = id >> 24;
          if (t >= sh.tokens)
            continue;
          const int64_t e = c.routing.ids[size_t(t * s.topk + slot)];
          const double w = doweight ? double(sorted->sortedWeights[size_t(r)]) : 1.0;
          for (int64_t i = 0; i < s.inter && shown < 5; ++i) {
            double g = 0, u = 0, gm = 0, um = 0;
            for (int64_t k = 0; k < s.hidden; ++k) {
              const double x = a[size_t(t * s.hidden + k)];
              const double wg =
                  HostLayer::at(c.layer.w1, c.layer.s1, s.hidden, e * 2 * s.inter + i, k);
              const double wu =
                  HostLayer::at(c.layer.w1, c.layer.s1, s.hidden, e * 2 * s.inter + s.inter + i, k);
              g += x * wg, u += x * wu, gm += std::fabs(x * wg), um += std::fabs(x * wu);
            }
            const double rel = fuse ? std::ldexp(double(s.hidden), -23) : std::ldexp(1.0, -8);
            const double dg = w * (rel * gm + 1e-30), du = w * (rel * um + 1e-30);
            const double want = moeActivation(o.activation, g * w, u * w);
            // The activation's slope bounds how far those errors move it.
            const double hi =
                std::max(std::fabs(moeActivation(o.activation, g * w + dg, u * w + du) - want),
                         std::fabs(moeActivation(o.activation, g * w - dg, u * w - du) - want));
            const double lo =
                std::max(std::fabs(moeActivation(o.activation, g * w + dg, u * w - du) - want),
                         std::fabs(moeActivation(o.activation, g * w - dg, u * w + du) - want));
            const double tol = 2 * std::max(hi, lo) + 1e-5 * std::fabs(want) + 1e-30;
            const double got = double(act[size_t(r * s.inter + i)]);
            if (!(std::fabs(got - want) <= tol)) {
              ++shown;
              ADD_FAILURE() << "row " << r << " column " << i << ": activation " << got << ", want "
                            << want << " (tolerance " << tol << ")";
            }
          }
        }
      }
  }
}

} // namespace
