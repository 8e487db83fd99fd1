//===- Version.h - The library's version and compiler identity ---*- C++ -*-===//
#ifndef MXFP4_JIT_VERSION_H
#define MXFP4_JIT_VERSION_H

#include <string>

namespace mxfp4 {
/// "<project version> (<git commit>)".
const char *version();

/// "mxfp4-jit <version> (<commit>); LLVM <version>; ": how every compiler
/// fingerprint starts. A runtime-only build serves exactly the cache entries
/// whose fingerprint starts with its own identity (same kernel ABI).
std::string compilerIdentity();
} // namespace mxfp4

#endif // MXFP4_JIT_VERSION_H
