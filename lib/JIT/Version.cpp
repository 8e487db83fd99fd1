//===- Version.cpp - The library's version and compiler identity ----------===//

#include "mxfp4/JIT/Version.h"

#include "llvm/Config/llvm-config.h"

namespace mxfp4 {
const char *version() { return MXFP4_VERSION " (" MXFP4_GIT_COMMIT ")"; }

std::string compilerIdentity() {
  return std::string("mxfp4-jit ") + version() + "; LLVM " LLVM_VERSION_STRING "; ";
}
} // namespace mxfp4
