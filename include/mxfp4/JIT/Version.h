//===- Version.h - The library's version and compiler identity ---*- C++ -*-===//
#ifndef MXFP4_JIT_VERSION_H
#define MXFP4_JIT_VERSION_H

#include <string>

namespace mxfp4 {
/// "<project version> (<git commit>)".
const char *version();

/// "mxfp4-jit <version> (<commit>); ": how every compiler fingerprint starts
/// (the LLVM version and the pipelines follow). A runtime-only build serves
/// exactly the cache entries whose fingerprint starts with its own identity:
/// the kernel ABI is versioned with the project.
std::string compilerIdentity();
} // namespace mxfp4

#endif // MXFP4_JIT_VERSION_H
