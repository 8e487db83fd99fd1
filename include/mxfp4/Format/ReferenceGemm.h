//===- ReferenceGemm.h - float64 CPU reference GEMMs ------------*- C++ -*-===//
//
// The references every kernel is checked against: C = dq(A) * dq(W)^T in
// float64 (exact products; only the K-sum rounds, at 2^-53), the QDQ path
// (quantize BF16 activations with a given mode first, as the kernels do), and
// a plain BF16 GEMM for "how much did quantizing cost" reports. Blocked and
// multithreaded: M = 256, N = K = 8448 takes seconds.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_REFERENCEGEMM_H
#define MXFP4_FORMAT_REFERENCEGEMM_H

#include "mxfp4/Format/Quantize.h"

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"
#include <functional>

#include <vector>

namespace mxfp4 {

/// A row-major [M, N] float64 result plus, per element, sum_k |a_k * w_k| (the
/// scale a tolerance is measured against).
struct GemmResult {
  int64_t m = 0, n = 0;
  std::vector<double> c;
  std::vector<double> absSum;
};

/// Writes row `row` (K values) of an operand to `out`.
using RowDecoder = std::function<void(int64_t row, double *out)>;

/// C = A * W^T for operands given row by row ([M, K] and [N, K]).
GemmResult gemmF64(int64_t m, int64_t n, int64_t k, RowDecoder aRow, RowDecoder wRow);

/// C = dq(A) * dq(W)^T. A and W must have the same K.
Expected<GemmResult> referenceGemm(const MxMatrix &a, const MxMatrix &w);

/// The QDQ path: A (BF16 bits, [m, k]) quantized with `mode`, then referenceGemm.
Expected<GemmResult> referenceGemmQdq(Span<uint16_t> aBf16, int64_t m, int64_t k, const MxMatrix &w,
                                      ScaleRounding mode = kDefaultScaleRounding);

/// Plain BF16 x BF16^T in float64 (no quantization): what an unquantized model computes.
Expected<GemmResult> referenceGemmBf16(Span<uint16_t> aBf16, int64_t m, Span<uint16_t> wBf16,
                                       int64_t n, int64_t k);

/// Error of `got` against `ref` (same size).
struct ErrorStats {
  double relL2 = 0;         ///< ||got - ref||_2 / ||ref||_2
  double maxAbs = 0;        ///< max |got - ref|
  double maxNormalized = 0; ///< max |got - ref| / absSum (0 where absSum is 0), if given
  int64_t nonFinite = 0;    ///< elements of `got` that are NaN or Inf where ref is finite
};

ErrorStats compareToReference(Span<double> got, Span<double> ref, Span<double> absSum = {});

} // namespace mxfp4

#endif // MXFP4_FORMAT_REFERENCEGEMM_H
