//===- Checked.h - Shape and size arithmetic that cannot wrap -----*- C++ -*-===//
//
// Every public entry point multiplies its extents (rows x columns, M x N)
// to size buffers and to compare with the kernels' 32-bit indexing. With
// int64 extents from a caller, a plain product can wrap and pass a check it
// should fail; these never wrap.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_CHECKED_H
#define MXFP4_SUPPORT_CHECKED_H

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace mxfp4 {

/// The kernels index with signed 32-bit offsets: one past the largest.
inline constexpr int64_t kIndex32Limit = int64_t(1) << 31;

/// The product of `factors`, or nullopt when a factor is negative or the
/// product does not fit in int64.
inline std::optional<int64_t> checkedProduct(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (f < 0 || __builtin_mul_overflow(p, f, &p))
      return std::nullopt;
  return p;
}

/// Whether the product of `factors` (each >= 0) is below `limit`.
inline bool productBelow(std::initializer_list<int64_t> factors, int64_t limit) {
  std::optional<int64_t> p = checkedProduct(factors);
  return p && *p < limit;
}

} // namespace mxfp4

#endif // MXFP4_SUPPORT_CHECKED_H
