//===- Expected.h - gtest helpers for Error and Expected -------*- C++ -*-===//
//
// Debian ships no LLVMTestingSupport, so these stand in for its matchers.
// They take the public API's mxfp4::Error/Expected; compiler tests include
// LLVMExpected.h for llvm::Error/Expected too.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H
#define MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H

#include "mxfp4/Support/Error.h"

#include "gtest/gtest.h"

#include <string>

namespace mxfp4::test {

/// The message of `e` ("" on success); consumes it.
inline std::string errorMessage(Error &e) { return e.message(); }

template <typename T> std::string errorMessage(Expected<T> &e) {
  return e ? std::string() : e.takeError().message();
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
    std::string want_ = std::string(substr);                                             \
    EXPECT_NE(msg_.find(want_), std::string::npos)                                                 \
        << "error was: '" << msg_ << "', expected it to contain '" << want_ << "'";                \
  } while (0)

#endif // MXFP4_UNITTESTS_TESTUTIL_EXPECTED_H
