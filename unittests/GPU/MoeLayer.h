//===- MoeLayer.h - A MoE layer for the GPU tests -------------*- C++ -*-===//
//
// A layer's random host weights (and biases), routings, the float64
// reference of the QDQ math fusedMoeA4W4 computes, the distance measures
// (rel-L2, seed 003's logits_diff) and a layer on the device with its call
// buffers: what FusedMoeGpuTest.cpp and FusedMoeStagesGpuTest.cpp share.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_GPU_MOELAYER_H
#define MXFP4_UNITTESTS_GPU_MOELAYER_H

#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/MoeActivation.h"
#include "TestUtil/Random.h"
#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace mxfp4::test {

/// A layer's host weights (GGUU), random E2M1 codes with scales 2^-8 to
/// 2^(maxScale - 127) (2^-3 by default: all below 128, the folded scales of
/// sm_90a; above, the unfolded ones).
struct HostLayer {
  MoeShape shape;
  std::vector<uint8_t> w1, s1, w2, s2;
  /// Optional biases: W1's [E, 2 inter] (GGUU), W2's [E, H]; empty: none.
  std::vector<float> b1, b2;
  HostLayer(std::mt19937_64 &rng, const MoeShape &s, int maxScale = 124) : shape(s) {
    w1 = randomBytes(rng, size_t(s.experts * 2 * s.inter * s.hidden / 2));
    s1 = randomScales(rng, size_t(s.experts * 2 * s.inter * s.hidden / 32), 119, maxScale);
    w2 = randomBytes(rng, size_t(s.experts * s.hidden * s.inter / 2));
    s2 = randomScales(rng, size_t(s.experts * s.hidden * s.inter / 32), 119, maxScale);
  }
  /// Element k of row r of a packed [rows, K] matrix with its scales.
  static double at(const std::vector<uint8_t> &w, const std::vector<uint8_t> &s, int64_t k,
                   int64_t r, int64_t c) {
    const uint8_t byte = w[size_t(r * k / 2 + c / 2)], scale = s[size_t(r * k / 32 + c / 32)];
    if (scale == 0xFF) // E8M0 NaN
      return std::nan("");
    return double(decodeE2M1(c % 2 ? byte >> 4 : byte & 0xF)) * std::ldexp(1.0, int(scale) - 127);
  }
  /// Random biases of both GEMMs, about the size of their outputs.
  void addBiases(std::mt19937_64 &rng) {
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    b1.resize(size_t(shape.experts * 2 * shape.inter));
    b2.resize(size_t(shape.experts * shape.hidden));
    for (float &x : b1)
      x = d(rng);
    for (float &x : b2)
      x = d(rng);
  }
  /// The weights of the experts `mask` keeps, in order (an EP rank's).
  HostLayer local(const std::vector<int32_t> &mask) const {
    HostLayer l = *this;
    l.w1.clear(), l.s1.clear(), l.w2.clear(), l.s2.clear(), l.b1.clear(), l.b2.clear();
    l.shape.experts = 0;
    auto take = [](std::vector<uint8_t> &to, const std::vector<uint8_t> &from, size_t e,
                   size_t per) {
      to.insert(to.end(), from.begin() + e * per, from.begin() + (e + 1) * per);
    };
    for (size_t e = 0; e < mask.size(); ++e) {
      if (!mask[e])
        continue;
      ++l.shape.experts;
      take(l.w1, w1, e, w1.size() / size_t(shape.experts));
      take(l.s1, s1, e, s1.size() / size_t(shape.experts));
      take(l.w2, w2, e, w2.size() / size_t(shape.experts));
      take(l.s2, s2, e, s2.size() / size_t(shape.experts));
      auto takeBias = [&](std::vector<float> &to, const std::vector<float> &from) {
        const size_t per = from.size() / size_t(shape.experts);
        to.insert(to.end(), from.begin() + long(e * per), from.begin() + long((e + 1) * per));
      };
      takeBias(l.b1, b1);
      takeBias(l.b2, b2);
    }
    return l;
  }
  /// W1 rows in the interleaved layout (16-row tiles, gate then up).
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> gugu() const {
    const int64_t rows = 2 * shape.inter, bytes = shape.hidden / 2, sc = shape.hidden / 32;
    std::vector<uint8_t> w(w1.size()), s(s1.size());
    for (int64_t e = 0; e < shape.experts; ++e)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t half = r / shape.inter, i = r % shape.inter;
        const int64_t to = e * rows + (i / 16) * 32 + half * 16 + i % 16, from = e * rows + r;
        std::copy_n(w1.data() + from * bytes, bytes, w.data() + to * bytes);
        std::copy_n(s1.data() + from * sc, sc, s.data() + to * sc);
      }
    return {w, s};
  }
  /// W1's bias in the interleaved layout's row order.
  std::vector<float> guguBias() const {
    const int64_t rows = 2 * shape.inter;
    std::vector<float> b(b1.size());
    for (int64_t e = 0; e < shape.experts; ++e)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t half = r / shape.inter, i = r % shape.inter;
        b[size_t(e * rows + (i / 16) * 32 + half * 16 + i % 16)] = b1[size_t(e * rows + r)];
      }
    return b;
  }
};

/// The adversarial blocks of the dense tests that keep a MoE layer finite
/// (all zero, +-6, subnormal, ties): an Inf, or 1e31 squared by the gated
/// activation, makes its whole token NaN (NonFiniteInputPoisonsOnlyItsToken).
inline void plantFiniteBlocks(std::vector<uint16_t> &a, int64_t m, int64_t k) {
  auto block = [&](int64_t b, auto value) {
    if (m < 1 || (b + 1) * 32 > k)
      return;
    for (int64_t i = 0; i < 32; ++i)
      a[size_t(b * 32 + i)] = value(i);
  };
  block(0, [](int64_t) { return uint16_t(0); });
  block(1, [](int64_t i) { return floatToBf16(i % 2 ? 6.0f : -6.0f); });
  block(2, [](int64_t i) { return floatToBf16(1e-38f * float(i - 16)); });
  block(3, [](int64_t i) { return floatToBf16(0.75f * float(i % 9) - 3.0f); });
}

struct Routing {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};
inline Routing randomRouting(std::mt19937_64 &rng, int64_t tokens, const MoeShape &s) {
  Routing r;
  std::vector<int32_t> perm(size_t(s.experts));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t e = 0; e < s.experts; ++e)
      perm[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < s.topk; ++j) {
      std::swap(perm[size_t(j)], perm[size_t(j) + rng() % size_t(s.experts - j)]);
      r.ids.push_back(perm[size_t(j)]);
      r.weights.push_back(float(1 + rng() % 1000) / 1000.0f);
    }
  }
  return r;
}

/// The float64 reference (Ops/MoeReference.h) of every token: with
/// `quantized`, the QDQ math the kernels compute (activations quantized with
/// `rounding`); without, BF16 activations and exact weights.
inline std::vector<double> reference(const HostLayer &l, const std::vector<uint16_t> &hidden,
                                     int64_t tokens, const Routing &r, const FusedMoeOptions &o,
                                     const std::vector<int32_t> &mask, bool quantized) {
  std::vector<int64_t> all(static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t)
    all[size_t(t)] = t;
  const MoeHostWeights w{l.shape, l.w1, l.s1, l.w2, l.s2, l.b1, l.b2};
  return referenceMoe(w, hidden, r.ids, r.weights, o, mask, quantized, all);
}

struct Distance {
  double relL2 = 0, logitsDiff = 0;
};
inline Distance distance(const std::vector<uint16_t> &got, const std::vector<double> &ref) {
  double xy = 0, xx = 0, yy = 0, dd = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double x = double(bf16ToFloat(got[i])), y = ref[i];
    xy += x * y;
    xx += x * x;
    yy += y * y;
    dd += (x - y) * (x - y);
  }
  Distance d;
  d.relL2 = std::sqrt(dd / std::max(yy, 1e-300));
  d.logitsDiff = 1.0 - 2.0 * xy / std::max(xx + yy, 1e-300);
  return d;
}

/// One layer on the device and its call buffers.
struct Case {
  Device &dev;
  HostLayer layer;
  int64_t tokens;
  std::unique_ptr<MoeWeights> weights;
  std::vector<uint16_t> hidden;
  Routing routing;
  DeviceBuffer dh, ids, tw, out, mask, dropped;
  Case(Device &dev, std::mt19937_64 &rng, const MoeShape &s, int64_t tokens, int maxScale = 124)
      : dev(dev), layer(rng, s, maxScale), tokens(tokens),
        hidden(randomActivations(rng, tokens, s.hidden)), routing(randomRouting(rng, tokens, s)),
        dh(dev, hidden.size() * 2), ids(dev, size_t(tokens * s.topk) * 4),
        tw(dev, size_t(tokens * s.topk) * 4), out(dev, size_t(tokens * s.hidden) * 2),
        mask(dev, size_t(s.experts) * 4), dropped(dev, 4) {
    plantFiniteBlocks(hidden, tokens, s.hidden);
    auto w = prepareMoeWeights(dev, s, layer.w1, layer.s1, layer.w2, layer.s2);
    EXPECT_TRUE(bool(w)) << (w ? "" : w.takeError().message());
    if (w)
      weights = std::move(*w);
    dh.upload(hidden);
    upload(routing);
  }
  void upload(const Routing &r) {
    routing = r;
    ids.upload(r.ids);
    tw.upload(r.weights);
  }
  Error run(const FusedMoeOptions &o, void *stream = nullptr) {
    return fusedMoeA4W4(dev, stream, dh.get(), tokens, static_cast<int32_t *>(ids.get()),
                        static_cast<float *>(tw.get()), *weights, o, out.get());
  }
  std::vector<uint16_t> result() {
    return out.download<uint16_t>(size_t(tokens * layer.shape.hidden));
  }
};

inline void expectClose(Case &c, const FusedMoeOptions &o, const std::vector<int32_t> &mask = {}) {
  std::vector<uint16_t> got = c.result();
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(std::isfinite(bf16ToFloat(got[i]))) << "element " << i;
  Distance q = distance(got, reference(c.layer, c.hidden, c.tokens, c.routing, o, mask, true));
  Distance b = distance(got, reference(c.layer, c.hidden, c.tokens, c.routing, o, mask, false));
  std::printf("  E %lld topk %lld H %lld inter %lld T %lld %s: vs QDQ rel-L2 %.3g logits_diff "
              "%.3g; vs BF16 rel-L2 %.3g logits_diff %.3g\n",
              (long long)c.layer.shape.experts, (long long)c.layer.shape.topk,
              (long long)c.layer.shape.hidden, (long long)c.layer.shape.inter, (long long)c.tokens,
              std::string(toString(o.activation.kind)).c_str(), q.relL2, q.logitsDiff, b.relL2,
              b.logitsDiff);
  // Against the QDQ reference (which rounds the stage-1 GEMM to bf16 where
  // the kernels do) what remains is f32 accumulation and two bf16 roundings
  // (stage 2's rows and the output), each at most 2^-9 relative, plus the
  // rare activation code that f32 rounding moves into the neighbouring
  // E2M1 bin: 0.01 holds that with room; seed 003's logits_diff gate too.
  EXPECT_LE(q.logitsDiff, 0.01);
  EXPECT_LE(q.relL2, 0.01);
}

/// Runs `o` into a poisoned output and checks it against the reference
/// of `ref` (the options whose path the reference models; default `o`).
inline void runAndExpectClose(Case &c, const FusedMoeOptions &o,
                              const FusedMoeOptions *ref = nullptr,
                              const std::vector<int32_t> &mask = {}) {
  c.out.fill(0xFF);
  ASSERT_OK(c.run(o));
  ASSERT_OK(c.dev.synchronize());
  expectClose(c, ref ? *ref : o, mask);
}

inline const MoeActivation kSitu{Activation::Situv2, 2.0f, 1.5f};

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_GPU_MOELAYER_H
