//===- MoeActivation.h - The gated activations in float64 ---------*- C++ -*-===//
//
// The MoE tests' reference of the gated activations (semantics.md 7),
// which is the library's gatedActivation.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H
#define MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H

#include "mxfp4/Ops/MoeReference.h"

namespace mxfp4::test {

/// The library's reference (Ops/MoeReference.h), under the tests' name.
inline double moeActivation(const MoeActivation &a, double g, double u) {
  return gatedActivation(a, g, u);
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_MOEACTIVATION_H
