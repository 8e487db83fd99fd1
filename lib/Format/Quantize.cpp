//===- Quantize.cpp - The CPU MXFP4 quantizer (the spec) ------------------===//

#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Format/E2M1.h"
#include "mxfp4/Support/BF16.h"
#include "mxfp4/Support/Checked.h"
#include "mxfp4/Support/Parallel.h"

#include <cmath>

namespace mxfp4 {

uint8_t quantizeBlock(const float *x, ScaleRounding mode, uint8_t *packed) {
  uint32_t amaxBits = 0;
  for (int64_t i = 0; i < kBlockSize; ++i)
    amaxBits = std::max(amaxBits, floatBits(x[i]) & 0x7FFFFFFFu);
  uint8_t scale = scaleFromAmax(amaxBits, mode);
  if (scale == kE8M0NaN) {
    std::fill(packed, packed + kBlockSize / 2, 0);
    return scale;
  }
  // Dividing by a power of two is exact in float64 for every f32 input and
  // every scale (2^-127 .. 2^127), so only encodeE2M1 rounds.
  int shift = 127 - int(scale);
  for (int64_t i = 0; i < kBlockSize; i += 2)
    packed[i / 2] = packE2M1(encodeE2M1(std::ldexp(double(x[i]), shift)),
                             encodeE2M1(std::ldexp(double(x[i + 1]), shift)));
  return scale;
}

Error checkQuantizeShape(int64_t rows, int64_t cols, size_t elements) {
  if (rows < 0 || cols <= 0)
    return errorf("mxfp4 quantize: shape [%lld, %lld] is invalid; rows must be "
                  ">= 0 and K > 0",
                  (long long)rows, (long long)cols);
  if (cols % kBlockSize != 0)
    return errorf("mxfp4 quantize: K = %lld is not a multiple of %lld (one E8M0 "
                  "scale covers %lld elements); pad K to %llu",
                  (long long)cols, (long long)kBlockSize, (long long)kBlockSize,
                  // Unsigned: the next multiple of a K near 2^63 is not an int64.
                  (unsigned long long)(uint64_t(cols) / kBlockSize * kBlockSize + kBlockSize));
  std::optional<int64_t> need = checkedProduct({rows, cols});
  if (!need)
    return errorf("mxfp4 quantize: shape [%lld, %lld] has more elements than int64 holds",
                  (long long)rows, (long long)cols);
  if (uint64_t(*need) != elements)
    return errorf("mxfp4 quantize: shape [%lld, %lld] needs %lld elements but "
                  "the input holds %zu",
                  (long long)rows, (long long)cols, (long long)*need, elements);
  return Error::success();
}

template <typename T, typename ToFloat>
static Expected<MxMatrix> quantizeImpl(Span<T> x, int64_t rows, int64_t cols, ScaleRounding mode,
                                       ToFloat toFloat) {
  if (Error e = checkQuantizeShape(rows, cols, x.size()))
    return e;
  MxMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.data.resize(size_t(rows * cols / 2));
  m.scales.resize(size_t(rows * cols / kBlockSize));
  int64_t blocks = rows * (cols / kBlockSize);
  parallelFor(blocks, 4096, [&](int64_t begin, int64_t end) {
    float tmp[kBlockSize];
    for (int64_t b = begin; b < end; ++b) {
      const T *src = x.data() + b * kBlockSize;
      for (int64_t i = 0; i < kBlockSize; ++i)
        tmp[i] = toFloat(src[i]);
      m.scales[b] = quantizeBlock(tmp, mode, m.data.data() + b * (kBlockSize / 2));
    }
  });
  return m;
}

Expected<MxMatrix> quantizeBf16(Span<uint16_t> x, int64_t rows, int64_t cols, ScaleRounding mode) {
  return quantizeImpl(x, rows, cols, mode, bf16ToFloat);
}

Expected<MxMatrix> quantizeF32(Span<float> x, int64_t rows, int64_t cols, ScaleRounding mode) {
  return quantizeImpl(x, rows, cols, mode, [](float f) { return f; });
}

double MxMatrix::at(int64_t r, int64_t c) const {
  const uint8_t *row = data.data() + r * bytesPerRow();
  return double(decodeE2M1(unpackE2M1(row, c))) *
         decodeE8M0(scales[size_t(r * scalesPerRow() + c / kBlockSize)]);
}

std::vector<double> dequantize(const MxMatrix &m) {
  std::vector<double> out(size_t(m.rows * m.cols));
  parallelFor(m.rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < m.cols; ++c)
        out[size_t(r * m.cols + c)] = m.at(r, c);
  });
  return out;
}

Error verifyMatrix(const MxMatrix &m) {
  if (m.rows < 0 || m.cols <= 0 || m.cols % kBlockSize != 0)
    return errorf("mxfp4 matrix: shape [%lld, %lld] is invalid (K must be a "
                  "positive multiple of 32)",
                  (long long)m.rows, (long long)m.cols);
  if (m.data.size() != size_t(m.rows * m.bytesPerRow()) ||
      m.scales.size() != size_t(m.rows * m.scalesPerRow()))
    return errorf("mxfp4 matrix [%lld, %lld]: expected %lld data bytes and %lld "
                  "scales, got %zu and %zu",
                  (long long)m.rows, (long long)m.cols, (long long)(m.rows * m.bytesPerRow()),
                  (long long)(m.rows * m.scalesPerRow()), m.data.size(), m.scales.size());
  return Error::success();
}

} // namespace mxfp4
