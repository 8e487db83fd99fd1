//===- LLVMExpected.h - The gtest helpers for llvm::Error too ---*- C++ -*-===//
//
// For tests of the compiler, which reports llvm::Error (Expected.h covers the
// public API's mxfp4::Error).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_LLVMEXPECTED_H
#define MXFP4_UNITTESTS_TESTUTIL_LLVMEXPECTED_H

#include "TestUtil/Expected.h"

#include "llvm/Support/Error.h"

namespace mxfp4::test {

inline std::string errorMessage(llvm::Error &e) {
  return e ? llvm::toString(std::move(e)) : std::string();
}

template <typename T> std::string errorMessage(llvm::Expected<T> &e) {
  return e ? std::string() : llvm::toString(e.takeError());
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_LLVMEXPECTED_H
