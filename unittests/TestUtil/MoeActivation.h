//===- MoeActivation.h - The gated activations in float64 ---------*- C++ -*-===//
//
// The MoE tests' reference of the gated activations (semantics.md 7):
// SiLU silu(g) u; SwiGLU (GPT-OSS) with alpha p0 and limit p1, g clamped
// above, u on both sides; SiTUv2 with beta p0 and linear_beta p1.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H
#define MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H

#include "mxfp4/Ops/MoeSteps.h"

#include <algorithm>
#include <cmath>

namespace mxfp4::test {

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline double moeActivation(const MoeActivation &a, double g, double u) {
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

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H
