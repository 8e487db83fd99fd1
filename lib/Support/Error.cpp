//===- Error.cpp - Errors and fallible results of the public API ----------===//

#include "mxfp4/Support/Error.h"

#include <cstdarg>
#include <cstdio>

namespace mxfp4 {

Error errorf(const char *format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string msg(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0)
    std::vsnprintf(msg.data(), msg.size() + 1, format, again);
  va_end(again);
  return Error(std::move(msg));
}

std::string printable(std::string_view text, size_t limit) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text.substr(0, limit)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (text.size() > limit)
    out += "...";
  return out;
}

} // namespace mxfp4
