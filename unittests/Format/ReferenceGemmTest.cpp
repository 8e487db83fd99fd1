//===- ReferenceGemmTest.cpp - float64 reference GEMMs --------------------===//

#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Support/BF16.h"
#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mxfp4;

namespace {

MxMatrix randomMx(std::mt19937_64 &rng, int64_t rows, int64_t k) {
  MxMatrix m;
  m.rows = rows;
  m.cols = k;
  m.data = test::randomBytes(rng, size_t(rows * k / 2));
  m.scales = test::randomScales(rng, size_t(rows * k / 32));
  return m;
}

/// The naive triple loop, summed in the obvious order.
double naiveDot(const MxMatrix &a, int64_t i, const MxMatrix &w, int64_t j, double *abs) {
  double s = 0, sa = 0;
  for (int64_t k = 0; k < a.cols; ++k) {
    s += a.at(i, k) * w.at(j, k);
    sa += std::fabs(a.at(i, k) * w.at(j, k));
  }
  if (abs)
    *abs = sa;
  return s;
}

TEST(ReferenceGemm, MatchesNaiveOnRaggedShapes) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 32},
                         {5, 70, 96},
                         {13, 129, 288},
                         {4, 64, 544}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
    MxMatrix a = randomMx(rng, m, k), w = randomMx(rng, n, k);
    auto r = referenceGemm(a, w);
    ASSERT_OK(r);
    ASSERT_EQ(r->m, m);
    ASSERT_EQ(r->n, n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double abs;
        double want = naiveDot(a, i, w, j, &abs);
        // Both sums are float64 with different order: error <= K * 2^-52 * sum|ab|.
        double tol = double(k) * std::ldexp(1.0, -52) * abs;
        ASSERT_NEAR(r->c[size_t(i * n + j)], want, tol) << i << "," << j;
        ASSERT_NEAR(r->absSum[size_t(i * n + j)], abs, tol);
      }
  }
}

TEST(ReferenceGemm, QdqEqualsQuantizeThenGemm) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t m = 9, n = 40, k = 128;
  std::vector<uint16_t> a = test::randomBf16(rng, size_t(m * k));
  MxMatrix w = randomMx(rng, n, k);
  for (ScaleRounding mode : allScaleRoundings()) {
    auto q = quantizeBf16(a, m, k, mode);
    ASSERT_OK(q);
    auto direct = referenceGemm(*q, w);
    auto qdq = referenceGemmQdq(a, m, k, w, mode);
    ASSERT_OK(direct);
    ASSERT_OK(qdq);
    EXPECT_EQ(direct->c, qdq->c) << std::string(toString(mode));
  }
}

TEST(ReferenceGemm, Bf16ReferenceAndErrorStats) {
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t m = 8, n = 64, k = 256;
  std::vector<uint16_t> a = test::randomBf16(rng, size_t(m * k)),
                        w = test::randomBf16(rng, size_t(n * k));
  auto exact = referenceGemmBf16(a, m, w, n, k);
  ASSERT_OK(exact);
  auto qw = quantizeBf16(w, n, k);
  ASSERT_OK(qw);
  auto qdq = referenceGemmQdq(a, m, k, *qw);
  ASSERT_OK(qdq);
  ErrorStats s = compareToReference(qdq->c, exact->c, exact->absSum);
  // Quantizing both operands of N(0,1) data costs a few to ~15 percent rel-L2.
  EXPECT_GT(s.relL2, 0.01);
  EXPECT_LT(s.relL2, 0.3);
  EXPECT_EQ(s.nonFinite, 0);
  ErrorStats same = compareToReference(exact->c, exact->c);
  EXPECT_EQ(same.relL2, 0.0);
  std::vector<double> withNan = exact->c;
  withNan[3] = NAN;
  EXPECT_EQ(compareToReference(withNan, exact->c).nonFinite, 1);
}

TEST(ReferenceGemm, LargeShapeRunsInSeconds) {
  // M = 256, N = K = 8448: the largest shape the GPU tests use. Spot-check
  // elements against the naive sum.
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const int64_t m = 256, n = 8448, k = 8448;
  MxMatrix a = randomMx(rng, m, k), w = randomMx(rng, n, k);
  auto r = referenceGemm(a, w);
  ASSERT_OK(r);
  for (int t = 0; t < 16; ++t) {
    int64_t i = int64_t(rng() % m), j = int64_t(rng() % n);
    double abs;
    double want = naiveDot(a, i, w, j, &abs);
    ASSERT_NEAR(r->c[size_t(i * n + j)], want, double(k) * std::ldexp(1.0, -52) * abs);
  }
}

TEST(ReferenceGemm, MismatchedKIsAnError) {
  std::mt19937_64 rng(1);
  MxMatrix a = randomMx(rng, 2, 64), w = randomMx(rng, 2, 96);
  EXPECT_ERROR_CONTAINS(referenceGemm(a, w), "A has K = 64 but W has K = 96");
  a.scales.pop_back();
  EXPECT_ERROR_CONTAINS(referenceGemm(a, a), "4 scales, got 64 and 3");
  std::vector<uint16_t> x(10);
  EXPECT_ERROR_CONTAINS(referenceGemmBf16(x, 2, x, 2, 32), "do not match");
}

} // namespace
