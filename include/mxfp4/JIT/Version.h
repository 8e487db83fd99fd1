//===- Version.h - The library's version string -----------------*- C++ -*-===//
#ifndef MXFP4_JIT_VERSION_H
#define MXFP4_JIT_VERSION_H

namespace mxfp4 {
/// "<project version> (<git commit>)".
const char *version();
} // namespace mxfp4

#endif // MXFP4_JIT_VERSION_H
