//===- Version.cpp - The library's version string -------------------------===//
//
// Also the one source of libmxfp4jit.so itself; the rest of the shared
// object is the project's static libraries, linked whole.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/JIT/Version.h"

namespace mxfp4 {
const char *version() { return MXFP4_VERSION " (" MXFP4_GIT_COMMIT ")"; }
} // namespace mxfp4
