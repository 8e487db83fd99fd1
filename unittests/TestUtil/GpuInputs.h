//===- GpuInputs.h - Random weights and activations for GPU tests -*- C++ -*-===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_GPUINPUTS_H
#define MXFP4_UNITTESTS_TESTUTIL_GPUINPUTS_H

#include "TestUtil/Random.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mxfp4::test {

/// Random weights: E2M1 bytes and scales around 2^-5 .. 2^3.
struct HostWeights {
  int64_t n, k;
  std::vector<uint8_t> data, scales;
  MxMatrix mx() const {
    MxMatrix m;
    m.rows = n;
    m.cols = k;
    m.data = data;
    m.scales = scales;
    return m;
  }
};

inline HostWeights randomWeights(std::mt19937_64 &rng, int64_t n, int64_t k) {
  return {n, k, randomBytes(rng, size_t(n * k / 2)),
          randomScales(rng, size_t(n * k / 32), 122, 130)};
}

/// LLM-like activations: N(0,1) with a few large outlier channels.
inline std::vector<uint16_t> randomActivations(std::mt19937_64 &rng, int64_t m, int64_t k) {
  std::vector<uint16_t> a = randomBf16(rng, size_t(m * k));
  for (int64_t c = 13; c < k; c += 997)
    for (int64_t r = 0; r < m; ++r)
      a[size_t(r * k + c)] = floatToBf16(bf16ToFloat(a[size_t(r * k + c)]) * 40.0f);
  return a;
}

/// Plants the adversarial 32-blocks of the seed checklist in rows of `a`.
inline void plantAdversarialBlocks(std::vector<uint16_t> &a, int64_t m, int64_t k) {
  auto block = [&](int64_t r, int64_t b, auto value) {
    if (r >= m || (b + 1) * 32 > k)
      return;
    for (int64_t i = 0; i < 32; ++i)
      a[size_t(r * k + b * 32 + i)] = value(i);
  };
  block(0, 0, [](int64_t) { return uint16_t(0); });                             // all zero
  block(0, 1, [](int64_t i) { return floatToBf16(i % 2 ? 6.0f : -6.0f); });     // +-6 exactly
  block(0, 2, [](int64_t i) { return floatToBf16(1e30f * float(i - 16)); });    // huge
  block(0, 3, [](int64_t i) { return floatToBf16(1e-38f * float(i - 16)); });   // tiny/subnormal
  block(0, 4, [](int64_t i) { return floatToBf16(i == 5 ? INFINITY : 1.0f); }); // Inf
  block(0, 5, [](int64_t i) { return floatToBf16(i == 7 ? -INFINITY : 0.25f); });
  block(0, 6, [](int64_t i) { return floatToBf16(0.75f * float(i % 9) - 3.0f); }); // ties
}

/// Fills every third row from row 1 with blocks of every scale: block j of
/// them has its largest exponent at 2^(-133 + j % 262) (bf16 subnormals to
/// the largest finite binade) and elements of random sign and mantissa up to
/// 9 binades below it, so each E8M0 code and both quantizer paths get used.
inline void plantScaleSweep(std::mt19937_64 &rng, std::vector<uint16_t> &a, int64_t m, int64_t k) {
  int64_t j = 0;
  for (int64_t r = 1; r < m; r += 3)
    for (int64_t b = 0; b < k / 32; ++b, ++j) {
      const int64_t top = j % 262 - 6; // biased exponent field of the largest element
      for (int64_t i = 0; i < 32; ++i) {
        const uint64_t bits = rng();
        int64_t e = i == 0 ? top : top - int64_t(bits % 10);
        e = std::max<int64_t>(0, std::min<int64_t>(254, e));
        a[size_t(r * k + b * 32 + i)] =
            uint16_t((bits >> 8 & 0x8000) | uint64_t(e) << 7 | (bits >> 40 & 0x7F));
      }
    }
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_GPUINPUTS_H
