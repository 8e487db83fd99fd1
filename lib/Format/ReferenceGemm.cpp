//===- ReferenceGemm.cpp - float64 CPU reference GEMMs --------------------===//
//
// Tiles of kTileN output columns are independent and go to threads. Within a
// tile, W is decoded once, transposed per kTileK slice so the inner loop runs
// over contiguous columns (vectorizes without reassociating a reduction), and
// four rows of A share each W load.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Support/BF16.h"
#include "mxfp4/Support/Checked.h"
#include "mxfp4/Support/Parallel.h"

#include <cmath>

namespace mxfp4 {

namespace {
constexpr int64_t kTileN = 64;
constexpr int64_t kTileK = 256;
constexpr int64_t kRowsPerStep = 4;

/// acc[r][j] += sum over kk of a[r][kk] * wt[kk][j], for 4 rows at once.
void accumulateTile(const double *a, int64_t k, int64_t k0, int64_t kk, const double *wt,
                    double *acc) {
  double *c0 = acc, *c1 = acc + kTileN, *c2 = acc + 2 * kTileN, *c3 = acc + 3 * kTileN;
  for (int64_t q = 0; q < kk; ++q) {
    const double *w = wt + q * kTileN;
    double a0 = a[k0 + q], a1 = a[k + k0 + q], a2 = a[2 * k + k0 + q], a3 = a[3 * k + k0 + q];
    for (int64_t j = 0; j < kTileN; ++j) {
      c0[j] += a0 * w[j];
      c1[j] += a1 * w[j];
      c2[j] += a2 * w[j];
      c3[j] += a3 * w[j];
    }
  }
}
} // namespace

GemmResult gemmF64(int64_t m, int64_t n, int64_t k, RowDecoder aRow, RowDecoder wRow) {
  GemmResult res;
  res.m = m;
  res.n = n;
  res.c.assign(size_t(m * n), 0.0);
  res.absSum.assign(size_t(m * n), 0.0);
  if (m == 0 || n == 0)
    return res;
  // A and |A|, rows padded to a multiple of kRowsPerStep with zeros.
  int64_t mPad = (m + kRowsPerStep - 1) / kRowsPerStep * kRowsPerStep;
  std::vector<double> a(size_t(mPad * k), 0.0), aAbs(size_t(mPad * k), 0.0);
  parallelFor(m, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      aRow(i, &a[size_t(i * k)]);
      for (int64_t q = 0; q < k; ++q)
        aAbs[size_t(i * k + q)] = std::fabs(a[size_t(i * k + q)]);
    }
  });
  int64_t tiles = (n + kTileN - 1) / kTileN;
  parallelFor(tiles, 1, [&](int64_t tb, int64_t te) {
    std::vector<double> rows(size_t(kTileN * k)), wt(size_t(kTileK * kTileN)),
        wtAbs(size_t(kTileK * kTileN)), acc(size_t(mPad * kTileN)), accAbs(size_t(mPad * kTileN));
    for (int64_t t = tb; t < te; ++t) {
      int64_t n0 = t * kTileN, nn = std::min(kTileN, n - n0);
      for (int64_t j = 0; j < nn; ++j)
        wRow(n0 + j, &rows[size_t(j * k)]);
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(accAbs.begin(), accAbs.end(), 0.0);
      for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
        int64_t kk = std::min(kTileK, k - k0);
        for (int64_t q = 0; q < kk; ++q)
          for (int64_t j = 0; j < kTileN; ++j) {
            double w = j < nn ? rows[size_t(j * k + k0 + q)] : 0.0;
            wt[size_t(q * kTileN + j)] = w;
            wtAbs[size_t(q * kTileN + j)] = std::fabs(w);
          }
        for (int64_t i = 0; i < mPad; i += kRowsPerStep) {
          accumulateTile(&a[size_t(i * k)], k, k0, kk, wt.data(), &acc[size_t(i * kTileN)]);
          accumulateTile(&aAbs[size_t(i * k)], k, k0, kk, wtAbs.data(),
                         &accAbs[size_t(i * kTileN)]);
        }
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < nn; ++j) {
          res.c[size_t(i * n + n0 + j)] = acc[size_t(i * kTileN + j)];
          res.absSum[size_t(i * n + n0 + j)] = accAbs[size_t(i * kTileN + j)];
        }
    }
  });
  return res;
}

static void decodeMxRow(const MxMatrix &mx, int64_t row, double *out) {
  for (int64_t c = 0; c < mx.cols; ++c)
    out[c] = mx.at(row, c);
}

Expected<GemmResult> referenceGemm(const MxMatrix &a, const MxMatrix &w) {
  if (Error e = verifyMatrix(a))
    return e;
  if (Error e = verifyMatrix(w))
    return e;
  if (a.cols != w.cols)
    return errorf("reference GEMM: A has K = %lld but W has K = %lld", (long long)a.cols,
                  (long long)w.cols);
  return gemmF64(
      a.rows, w.rows, a.cols, [&](int64_t r, double *out) { decodeMxRow(a, r, out); },
      [&](int64_t r, double *out) { decodeMxRow(w, r, out); });
}

Expected<GemmResult> referenceGemmQdq(Span<uint16_t> aBf16, int64_t m, int64_t k, const MxMatrix &w,
                                      ScaleRounding mode) {
  Expected<MxMatrix> qa = quantizeBf16(aBf16, m, k, mode);
  if (!qa)
    return qa.takeError();
  return referenceGemm(*qa, w);
}

Expected<GemmResult> referenceGemmBf16(Span<uint16_t> aBf16, int64_t m, Span<uint16_t> wBf16,
                                       int64_t n, int64_t k) {
  std::optional<int64_t> aSize = checkedProduct({m, k}), wSize = checkedProduct({n, k});
  if (k <= 0 || !aSize || !wSize || aBf16.size() != size_t(*aSize) ||
      wBf16.size() != size_t(*wSize))
    return errorf("BF16 reference GEMM: A [%lld, %lld] and W [%lld, %lld] do not "
                  "match buffers of %zu and %zu elements",
                  (long long)m, (long long)k, (long long)n, (long long)k, aBf16.size(),
                  wBf16.size());
  auto decoder = [k](Span<uint16_t> x) {
    return [x, k](int64_t r, double *out) {
      for (int64_t c = 0; c < k; ++c)
        out[c] = bf16ToFloat(x[size_t(r * k + c)]);
    };
  };
  return gemmF64(m, n, k, decoder(aBf16), decoder(wBf16));
}

ErrorStats compareToReference(Span<double> got, Span<double> ref, Span<double> absSum) {
  ErrorStats s;
  double errSq = 0, refSq = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    if (!std::isfinite(got[i]) && std::isfinite(ref[i])) {
      ++s.nonFinite;
      continue;
    }
    double d = std::fabs(got[i] - ref[i]);
    errSq += d * d;
    refSq += ref[i] * ref[i];
    s.maxAbs = std::max(s.maxAbs, d);
    if (i < absSum.size() && absSum[i] > 0)
      s.maxNormalized = std::max(s.maxNormalized, d / absSum[i]);
  }
  s.relL2 = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  return s;
}

} // namespace mxfp4
