//===- StrCat.h - Build a string from strings and numbers -------*- C++ -*-===//
//
// strCat("N = ", n, ", layout ", name) for messages and names: strings,
// string views, characters and integers, appended in order (integers in
// decimal). No streams, so it is cheap enough for kernel names.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_STRCAT_H
#define MXFP4_SUPPORT_STRCAT_H

#include <string>
#include <string_view>
#include <type_traits>

namespace mxfp4 {

namespace detail {
inline void appendPart(std::string &s, std::string_view v) { s.append(v); }
inline void appendPart(std::string &s, const char *v) { s.append(v); }
inline void appendPart(std::string &s, char c) { s.push_back(c); }
template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                           !std::is_same_v<T, bool>,
                                       int> = 0>
void appendPart(std::string &s, T v) {
  s += std::to_string(v);
}
} // namespace detail

template <typename... Parts> std::string strCat(const Parts &...parts) {
  std::string s;
  (detail::appendPart(s, parts), ...);
  return s;
}

} // namespace mxfp4

#endif // MXFP4_SUPPORT_STRCAT_H
