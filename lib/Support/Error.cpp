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

} // namespace mxfp4
