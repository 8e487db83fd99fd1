//===- ShapeChecksFuzzer.cpp - Shape checks at int64 extremes --------------===//
//
// The host entry points size buffers from caller's int64 extents. With a
// small real buffer and any extents (read from the input, extremes
// included), each either succeeds on a shape that fits the buffer or fails
// with a message: no wrap, no overrun.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/Layout.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Format/ReferenceGemm.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace mxfp4;

namespace {
int64_t take(const uint8_t *&data, size_t &size) {
  int64_t v = 0;
  size_t n = std::min(size, sizeof v);
  std::memcpy(&v, data, n);
  data += n;
  size -= n;
  // Bias towards the edges: small values, powers of two and the extremes.
  switch (uint64_t(v) % 4) {
  case 0:
    return v % 4096;
  case 1:
    return int64_t(1) << (uint64_t(v >> 2) % 63);
  case 2:
    return v < 0 ? INT64_MIN + (v & 7) : INT64_MAX - (v & 7);
  default:
    return v;
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const int64_t a = take(data, size), b = take(data, size), c = take(data, size);
  static const std::vector<uint16_t> bf16(4096, 0x3F80);
  static const std::vector<uint8_t> bytes(4096, 0x22);
  const Span<uint16_t> x(bf16.data(), size_t(std::abs(a % 4097)));
  const Span<uint8_t> y(bytes.data(), size_t(std::abs(a % 4097)));
  if (auto q = quantizeBf16(x, b, c))
    if (size_t(q->rows * q->cols) != x.size())
      std::abort();
  for (ScaleLayout l : {ScaleLayout::RowMajor, ScaleLayout::Gfx950Mfma16, ScaleLayout::Gfx1250Wmma,
                        ScaleLayout::Sm90Mma16})
    if (auto s = shuffleScales(l, y, b, c); s && size_t(b * c) != y.size())
      std::abort();
  for (WeightLayout l :
       {WeightLayout::RowMajor, WeightLayout::Gfx950Mfma16, WeightLayout::Sm90Mma16})
    if (auto w = shuffleWeight(l, y, b, c); w && size_t(b * c) != y.size())
      std::abort();
  (void)referenceGemmBf16(x, b, x, c, a);
  return 0;
}
