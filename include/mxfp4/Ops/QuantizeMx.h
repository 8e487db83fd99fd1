//===- QuantizeMx.h - The public MXFP4 quantizer op --------------*- C++ -*-===//
//
//   mxfp4::quantizeMxfp4(dev, stream, aBf16, M, K, codes, scales);
//
// Quantizes activations on the device once, bit for bit the CPU quantizer
// (Format/Quantize.h) in any of the four scale-rounding modes: what an
// engine runs when several GEMMs read the same activations, and what
// gemmA4W4 runs before gemm_mxa4w4 when M is large.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_QUANTIZEMX_H
#define MXFP4_OPS_QUANTIZEMX_H

#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Error.h"

#include <optional>

namespace mxfp4 {

/// The quantizer's row tile for M rows of K: the power of two >= M, 8 .. 64,
/// smaller while that leaves fewer than ~4 workgroups per SM.
int64_t selectQuantizeMxBm(int64_t m, int64_t k);

/// a [M, K] bf16 (device, row-major, 16-byte aligned) -> packed E2M1 `codes`
/// [M, K/2] (4-byte aligned) and E8M0 `scales` [M, K/32], row-major, on
/// `stream`. K must be a multiple of 128; M >= 1. The target is `arch`
/// (default: targetArch(&dev); sm_90a).
Error quantizeMxfp4(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *codes,
                    void *scales, ScaleRounding rounding = kDefaultScaleRounding,
                    std::optional<Arch> arch = std::nullopt);

/// a [M, K] bf16 -> `out`, the values a's MXFP4 quantization stands for,
/// dequantize(quantizeMxfp4(a)) exactly, as bf16 in the sm_90a activation
/// image (sm90::activationImageIndex, Kernels/Sm90Pipeline.h): the wgmma
/// operand layout gemm_qdqa4w4 copies into shared memory as it is.
/// `out` holds sm90::activationImageElements(M, K) bf16 (rows padded to 128;
/// padding rows zero up to a multiple of 8, never written after) and is
/// 16-byte aligned. `bm` overrides the row tile (8, 16, 32 or 64; 0:
/// selectQuantizeMxBm).
Error qdqMxfp4(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *out,
               ScaleRounding rounding = kDefaultScaleRounding,
               std::optional<Arch> arch = std::nullopt, int64_t bm = 0);

/// How qdqMxfp4Streamed publishes its image to the gemm_qdqa4w4 launched
/// right after it on the same stream (Schedule::imageStream).
struct ImageStream {
  /// i32 per (128-row block, 128-K chunk), zero before the call; the GEMM
  /// leaves them zero.
  void *flags = nullptr;
  /// The GEMM's split-K: the quantizer's pieces follow its K order.
  int64_t splits = 1;
  /// Quantizer workgroups per SM (the grid loops over the pieces).
  int64_t workgroupsPerSm = 2;
};

/// The streamed quantizer's rows per piece for M rows: 32, or the least of
/// 8 / 16 that covers a smaller M.
int64_t streamedQuantizerRows(int64_t m);

/// qdqMxfp4 as the streamed image's producer: BM x 128 pieces (BM 8, 16 or
/// 32, 0: streamedQuantizerRows) counted into `s.flags` as they are written. Only a
/// gemm_qdqa4w4 with the same imageStream rows reads them (Ops/GemmA4W4.cpp).
Error qdqMxfp4Streamed(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *out,
                       const ImageStream &s, ScaleRounding rounding = kDefaultScaleRounding,
                       std::optional<Arch> arch = std::nullopt, int64_t bm = 0);

} // namespace mxfp4

#endif // MXFP4_OPS_QUANTIZEMX_H
