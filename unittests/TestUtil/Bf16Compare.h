//===- Bf16Compare.h - Bit-for-bit comparison of BF16 outputs ----*- C++ -*-===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_BF16COMPARE_H
#define MXFP4_UNITTESTS_TESTUTIL_BF16COMPARE_H

#include "mxfp4/Support/BF16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

namespace mxfp4::test {

/// The number of elements whose bit patterns differ (with `nanMatchesNaN`,
/// any NaN equals any NaN); the first few are reported as failures that name
/// `got` and `want`.
inline int64_t bf16Differences(const std::vector<uint16_t> &got, const std::vector<uint16_t> &want,
                               const std::string &gotName, const std::string &wantName,
                               bool nanMatchesNaN = false) {
  int64_t differ = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (got[i] == want[i])
      continue;
    if (nanMatchesNaN && std::isnan(bf16ToFloat(got[i])) && std::isnan(bf16ToFloat(want[i])))
      continue;
    if (differ++ < 5)
      ADD_FAILURE() << "element " << i << ": " << gotName << " 0x" << std::hex << got[i] << ", "
                    << wantName << " 0x" << want[i] << std::dec;
  }
  return differ +
         int64_t(got.size() > want.size() ? got.size() - want.size() : want.size() - got.size());
}

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_BF16COMPARE_H
