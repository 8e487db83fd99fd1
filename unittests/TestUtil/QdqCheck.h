//===- QdqCheck.h - GEMM outputs against the float64 QDQ reference -*- C++ -*-===//
//
// Shared by the GPU tests: the tolerance is (K * 2^-24 + 2^-8) * sum_k
// |a_k w_k| per element (FP32 accumulation, BF16 output), against
// referenceGemmQdq; a guard row after C must keep its poison.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_QDQCHECK_H
#define MXFP4_UNITTESTS_TESTUTIL_QDQCHECK_H

#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace mxfp4::test {

/// Checks C (bf16 [M, N] of A and W) against the float64 QDQ reference on
/// up to `sampleRows` rows (all rows when M is small); prints the errors.
inline void expectMatchesQdq(std::mt19937_64 &rng, const std::vector<uint16_t> &a,
                             const HostWeights &w, int64_t m, const std::vector<uint16_t> &c,
                             int sampleRows = 48, bool print = false) {
  const int64_t n = w.n, k = w.k;
  std::vector<int64_t> rows;
  if (m <= sampleRows) {
    for (int64_t r = 0; r < m; ++r)
      rows.push_back(r);
  } else {
    rows = {0, m - 1};
    while (int64_t(rows.size()) < sampleRows)
      rows.push_back(int64_t(rng() % uint64_t(m)));
  }
  int64_t rs = int64_t(rows.size());
  std::vector<uint16_t> aRows(size_t(rs * k));
  for (int64_t i = 0; i < rs; ++i)
    std::copy_n(&a[size_t(rows[size_t(i)] * k)], k, &aRows[size_t(i * k)]);
  MxMatrix wm = w.mx();
  auto qdq = referenceGemmQdq(aRows, rs, k, wm);
  ASSERT_OK(qdq);
  GemmResult bf16 = gemmF64(
      rs, n, k,
      [&](int64_t r, double *out) {
        for (int64_t q = 0; q < k; ++q)
          out[q] = bf16ToFloat(aRows[size_t(r * k + q)]);
      },
      [&](int64_t r, double *out) {
        for (int64_t q = 0; q < k; ++q)
          out[q] = wm.at(r, q);
      });
  std::vector<double> got(size_t(rs * n));
  for (int64_t i = 0; i < rs; ++i)
    for (int64_t j = 0; j < n; ++j)
      got[size_t(i * n + j)] = bf16ToFloat(c[size_t(rows[size_t(i)] * n + j)]);
  const double tol = double(k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double ref = qdq->c[i];
    if (std::isnan(ref)) {
      bad += !std::isnan(got[i]);
      continue;
    }
    if (!std::isfinite(got[i]) || std::fabs(got[i] - ref) > tol * qdq->absSum[i]) {
      if (bad++ < 5)
        ADD_FAILURE() << "element " << i << ": gpu " << got[i] << " ref " << ref << " bound "
                      << tol * qdq->absSum[i];
    }
  }
  EXPECT_EQ(bad, 0);
  ErrorStats vsQdq = compareToReference(got, qdq->c, qdq->absSum);
  ErrorStats vsBf16 = compareToReference(got, bf16.c);
  if (print)
    std::printf("[ numerics ] N=%5lld K=%5lld M=%5lld: rel-L2 vs QDQ %.2e (max |err|/sum|ab| "
                "%.2e), vs BF16 %.2f%%\n",
                (long long)n, (long long)k, (long long)m, vsQdq.relL2, vsQdq.maxNormalized,
                100 * vsBf16.relL2);
}

/// Runs gemmA4W4 into `dc` (M + 1 rows, poisoned first), checks that the
/// guard row after C still holds the poison and returns the M x N output.
inline std::vector<uint16_t> gemmWithGuardRow(Device &dev, const DeviceBuffer &da, DeviceBuffer &dc,
                                              int64_t m, int64_t n, const PreparedWeight &w,
                                              const GemmA4W4Options &o = {}) {
  dc.fill(0xFF);
  Error e = gemmA4W4(dev, nullptr, da.get(), m, w, dc.get(), o);
  if (!e)
    e = dev.synchronize();
  if (e) {
    ADD_FAILURE() << e.message();
    return {};
  }
  std::vector<uint16_t> c = dc.download<uint16_t>(size_t((m + 1) * n));
  for (int64_t j = 0; j < n; ++j)
    if (c[size_t(m * n + j)] != 0xFFFF) {
      ADD_FAILURE() << "wrote past row M at column " << j;
      break;
    }
  c.resize(size_t(m * n));
  return c;
}

/// Runs one GEMM point and checks it against the float64 QDQ reference on up
/// to `sampleRows` rows (all rows when M is small).
inline void checkPoint(Device &dev, std::mt19937_64 &rng, uint64_t seed, int64_t n, int64_t k,
                       int64_t m, int sampleRows = 48, bool print = true) {
  SCOPED_TRACE(testing::Message() << "N=" << n << " K=" << k << " M=" << m << " seed=" << seed);
  HostWeights w = randomWeights(rng, n, k);
  auto prepared = prepareGemmA4W4Weight(dev, w.data, w.scales, n, k);
  ASSERT_OK(prepared);
  std::vector<uint16_t> a = randomActivations(rng, m, k);
  // One guard row after C: must still hold the poison.
  DeviceBuffer da(dev, a.size() * 2), dc(dev, size_t((m + 1) * n * 2));
  da.upload(a);
  std::vector<uint16_t> c = gemmWithGuardRow(dev, da, dc, m, n, **prepared);
  ASSERT_FALSE(c.empty());
  expectMatchesQdq(rng, a, w, m, c, sampleRows, print);
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_QDQCHECK_H
