//===- Version.cpp - The library's version and compiler identity ----------===//

#include "mxfp4/JIT/Version.h"

namespace mxfp4 {
const char *version() { return MXFP4_VERSION " (" MXFP4_GIT_COMMIT ")"; }

std::string compilerIdentity() { return std::string("mxfp4-jit ") + version() + "; "; }
} // namespace mxfp4
