//===- Quantize.h - The CPU MXFP4 quantizer (the spec) ----------*- C++ -*-===//
//
// Quantizes [rows, K] BF16 or F32 matrices to packed E2M1 + E8M0 scales, one
// scale per 32 consecutive K-elements of a row, and dequantizes them back.
// This quantizer defines the numerics: GPU quantization must match its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_QUANTIZE_H
#define MXFP4_FORMAT_QUANTIZE_H

#include "mxfp4/Format/E8M0.h"

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"

#include <cstdint>
#include <vector>

namespace mxfp4 {

/// A row-major MXFP4 matrix: `data` is [rows, cols/2] packed E2M1 (even
/// element in the low nibble), `scales` is [rows, cols/32] E8M0, unshuffled.
struct MxMatrix {
  int64_t rows = 0;
  int64_t cols = 0; ///< Elements per row (K), a multiple of kBlockSize.
  std::vector<uint8_t> data;
  std::vector<uint8_t> scales;

  int64_t bytesPerRow() const { return cols / 2; }
  int64_t scalesPerRow() const { return cols / kBlockSize; }
  /// The dequantized value of element (r, c), as float64 (exact).
  double at(int64_t r, int64_t c) const;
};

/// Quantizes one 32-element block: writes 16 packed bytes, returns the scale.
/// amax is the integer maximum of the |x| f32 bit patterns, so a NaN anywhere
/// in the block is the amax. Elements are x / 2^(scale-127) rounded by
/// encodeE2M1; under a NaN scale every element code is 0.
uint8_t quantizeBlock(const float *x, ScaleRounding mode, uint8_t *packed);

/// Checks that a [rows, cols] matrix of `elements` values can be quantized:
/// rows >= 0, cols > 0 and a multiple of 32, elements == rows * cols.
Error checkQuantizeShape(int64_t rows, int64_t cols, size_t elements);

/// Quantizes a row-major BF16 matrix (raw bit patterns), multithreaded.
Expected<MxMatrix> quantizeBf16(Span<uint16_t> x, int64_t rows, int64_t cols,
                                ScaleRounding mode = kDefaultScaleRounding);

/// Quantizes a row-major F32 matrix, multithreaded.
Expected<MxMatrix> quantizeF32(Span<float> x, int64_t rows, int64_t cols,
                               ScaleRounding mode = kDefaultScaleRounding);

/// Dequantizes to a row-major float64 [rows, cols] matrix (every MXFP4 value,
/// including 6 * 2^127, is exact in float64; NaN scales give NaN rows).
std::vector<double> dequantize(const MxMatrix &m);

/// Checks the internal consistency of `m` (sizes match rows and cols).
Error verifyMatrix(const MxMatrix &m);

} // namespace mxfp4

#endif // MXFP4_FORMAT_QUANTIZE_H
