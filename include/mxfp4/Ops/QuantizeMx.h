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

} // namespace mxfp4

#endif // MXFP4_OPS_QUANTIZEMX_H
