//===- Expected.h - gtest helpers for llvm::Error/Expected ------*- C++ -*-===//
//
// Debian ships no LLVMTestingSupport, so these stand in for its matchers.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H
#define MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H

#include "gtest/gtest.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mxfp4::test {

/// The message of `e` ("" on success); consumes it.
inline std::string errorMessage(llvm::Error &e) {
  return e ? llvm::toString(std::move(e)) : std::string();
}

template <typename T> std::string errorMessage(llvm::Expected<T> &e) {
  return e ? std::string() : llvm::toString(e.takeError());
}

} // namespace mxfp4::test

/// Fails the test (fatally) with the error text when `expr` holds an error.
#define ASSERT_OK(expr)                                                                            \
  do {                                                                                             \
    auto &&v_ = (expr);                                                                            \
    std::string msg_ = ::mxfp4::test::errorMessage(v_);                                            \
    ASSERT_TRUE(msg_.empty()) << msg_;                                                             \
  } while (0)

/// Expects `expr` to hold an error whose text contains `substr`.
#define EXPECT_ERROR_CONTAINS(expr, substr)                                                        \
  do {                                                                                             \
    auto &&e_ = (expr);                                                                            \
    std::string msg_ = ::mxfp4::test::errorMessage(e_);                                            \
    std::string want_ = llvm::StringRef(substr).str();                                             \
    EXPECT_NE(msg_.find(want_), std::string::npos)                                                 \
        << "error was: '" << msg_ << "', expected it to contain '" << want_ << "'";                \
  } while (0)

#endif // MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H
