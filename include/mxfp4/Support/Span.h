//===- Span.h - A read-only view of contiguous elements ---------*- C++ -*-===//
//
// What the public API takes for host arrays (std::span is C++20; the API is
// C++17 and free of LLVM types). Views, never owns: the viewed storage must
// outlive it.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_SPAN_H
#define MXFP4_SUPPORT_SPAN_H

#include <array>
#include <cassert>
#include <cstddef>
#include <vector>

namespace mxfp4 {

template <typename T> class Span {
public:
  constexpr Span() = default;
  constexpr Span(const T *data, size_t size) : ptr(data), count(size) {}
  template <typename A> Span(const std::vector<T, A> &v) : ptr(v.data()), count(v.size()) {}
  template <size_t N> constexpr Span(const std::array<T, N> &a) : ptr(a.data()), count(N) {}
  template <size_t N> constexpr Span(const T (&a)[N]) : ptr(a), count(N) {}

  constexpr const T *data() const { return ptr; }
  constexpr size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  constexpr const T *begin() const { return ptr; }
  constexpr const T *end() const { return ptr + count; }
  constexpr const T &operator[](size_t i) const {
    assert(i < count && "Span index out of range");
    return ptr[i];
  }
  /// Elements [offset, offset + n).
  constexpr Span slice(size_t offset, size_t n) const {
    assert(offset + n <= count && "Span slice out of range");
    return {ptr + offset, n};
  }

private:
  const T *ptr = nullptr;
  size_t count = 0;
};

} // namespace mxfp4

#endif // MXFP4_SUPPORT_SPAN_H
