//===- CublasPeer.h - cuBLAS GEMMs as the peer, loaded with dlopen -*- C++ -*-===//
//
// What a Hopper user runs today: cuBLAS BF16 GEMM on unquantized weights and
// cuBLASLt FP8 (e4m3) GEMM. Both compute C[M, N] = A[M, K] * W[N, K]^T
// row-major (a column-major TN GEMM of C^T = W A^T). Loaded at run time, so
// the benchmark builds without the CUDA SDK.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_MXFP4_BENCH_CUBLASPEER_H
#define MXFP4_TOOLS_MXFP4_BENCH_CUBLASPEER_H

#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <string>

namespace mxfp4::bench {

class CublasPeer {
public:
  /// Loads libcublas / libcublasLt; errors say what is missing.
  static Expected<std::unique_ptr<CublasPeer>> load();
  ~CublasPeer();

  /// C (bf16) = A (bf16) * W (bf16)^T, FP32 accumulation.
  Error gemmBf16(const void *a, const void *w, void *c, int64_t m, int64_t n, int64_t k,
                       void *stream);
  /// C (bf16) = A (e4m3) * W (e4m3)^T via cuBLASLt; `workspace` of `wsBytes`.
  Error gemmFp8(const void *a, const void *w, void *c, int64_t m, int64_t n, int64_t k,
                      void *workspace, size_t wsBytes, void *stream);

private:
  CublasPeer() = default;
  struct Api;
  Api *api = nullptr;
  void *handle = nullptr;   ///< cublasHandle_t
  void *ltHandle = nullptr; ///< cublasLtHandle_t
};

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_MXFP4_BENCH_CUBLASPEER_H
