//===- MoeReference.cpp - The float64 reference of a MoE layer ------------===//

#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>

namespace mxfp4 {

Span<MoeModel> moeModels() {
  static const MoeModel kModels[] = {
      {"kimi-k3", {896, 16, 3584, 768}, {Activation::Situv2, 1.0f, 1.0f}},
      {"gpt-oss-120b", {128, 4, 2880, 2880}, swigluGptOss()},
      {"deepseek-r1", {256, 8, 7168, 256}, {Activation::Silu, 0.0f, 0.0f}}};
  return kModels;
}

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gatedActivation(const MoeActivation &a, double g, double u) {
  switch (a.kind) {
  case Activation::Silu:
    return g * sigmoid(g) * u;
  case Activation::Swiglu: {
    const double gc = std::min<double>(g, a.p1);
    const double uc = std::max<double>(std::min<double>(u, a.p1), -a.p1);
    return gc * sigmoid(a.p0 * gc) * (uc + 1.0);
  }
  case Activation::Situv2:
    return a.p0 * std::tanh(g / a.p0) * sigmoid(g) * a.p1 * std::tanh(u / a.p1);
  case Activation::None:
    break;
  }
  return g;
}

/// Element c of row r of a packed [rows, k] matrix with its scales.
static double weightAt(Span<uint8_t> w, Span<uint8_t> s, int64_t k, int64_t r, int64_t c) {
  const uint8_t byte = w[size_t(r * k / 2 + c / 2)], scale = s[size_t(r * k / 32 + c / 32)];
  if (scale == 0xFF) // E8M0 NaN
    return std::nan("");
  return double(decodeE2M1(c % 2 ? byte >> 4 : byte & 0xF)) * std::ldexp(1.0, int(scale) - 127);
}

std::vector<double> referenceMoe(const MoeHostWeights &l, Span<uint16_t> hidden, Span<int32_t> ids,
                                 Span<float> routing, const FusedMoeOptions &o, Span<int32_t> mask,
                                 bool quantized, Span<int64_t> tokens) {
  const MoeShape &s = l.shape;
  std::vector<double> out(tokens.size() * size_t(s.hidden), 0.0);
  std::vector<double> a(size_t(s.hidden));
  std::vector<float> act(size_t(s.inter));
  for (size_t ti = 0; ti < tokens.size(); ++ti) {
    const int64_t t = tokens[ti];
    Span<uint16_t> row(hidden.data() + t * s.hidden, size_t(s.hidden));
    if (quantized) {
      std::vector<uint16_t> copy(row.begin(), row.end());
      a = dequantize(*quantizeBf16(copy, 1, s.hidden, o.rounding));
    } else {
      for (int64_t k = 0; k < s.hidden; ++k)
        a[size_t(k)] = double(bf16ToFloat(row[size_t(k)]));
    }
    for (int64_t j = 0; j < s.topk; ++j) {
      const int32_t e = ids[size_t(t * s.topk + j)];
      if (!mask.empty() && !mask[size_t(e)])
        continue;
      const double w = routing[size_t(t * s.topk + j)];
      for (int64_t i = 0; i < s.inter; ++i) {
        double g = 0, u = 0;
        for (int64_t k = 0; k < s.hidden; ++k) {
          g += a[size_t(k)] * weightAt(l.w1, l.s1, s.hidden, e * 2 * s.inter + i, k);
          u += a[size_t(k)] * weightAt(l.w1, l.s1, s.hidden, e * 2 * s.inter + s.inter + i, k);
        }
        if (quantized && !o.fuseActivation) { // unfused, moe_gemm stores bf16 gate/up rows
          g = double(bf16ToFloat(floatToBf16(float(g))));
          u = double(bf16ToFloat(floatToBf16(float(u))));
        }
        if (!l.b1.empty()) {
          g += double(l.b1[size_t(e * 2 * s.inter + i)]);
          u += double(l.b1[size_t(e * 2 * s.inter + s.inter + i)]);
        }
        const double scale = o.doweightStage1 ? w : 1.0;
        act[size_t(i)] = float(gatedActivation(o.activation, g * scale, u * scale));
      }
      std::vector<double> a2(act.begin(), act.end());
      if (quantized)
        a2 = dequantize(*quantizeF32(act, 1, s.inter, o.rounding));
      const double ws = o.doweightStage1 ? 1.0 : w;
      for (int64_t h = 0; h < s.hidden; ++h) {
        double y = 0;
        for (int64_t i = 0; i < s.inter; ++i)
          y += a2[size_t(i)] * weightAt(l.w2, l.s2, s.inter, e * s.hidden + h, i);
        if (!l.b2.empty())
          y += double(l.b2[size_t(e * s.hidden + h)]);
        out[ti * size_t(s.hidden) + size_t(h)] += ws * y;
      }
    }
  }
  return out;
}

} // namespace mxfp4
