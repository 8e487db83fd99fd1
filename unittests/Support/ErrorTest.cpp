//===- ErrorTest.cpp - Error, Expected, Span, strCat ----------------------===//

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"

#include "gtest/gtest.h"

#include <memory>
#include <optional>

using namespace mxfp4;

namespace {

Error failIf(bool bad) {
  return bad ? makeError("bad value ", -3, ", expected ", 7u) : Error::success();
}

TEST(Error, SuccessIsFalseAndFailureCarriesItsMessage) {
  Error ok = failIf(false);
  EXPECT_FALSE(ok);
  EXPECT_EQ(ok.message(), "");
  Error bad = failIf(true);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad.message(), "bad value -3, expected 7");
  Error moved = std::move(bad);
  EXPECT_TRUE(moved);
  EXPECT_EQ(errorf("K = %lld is not a multiple of %d", 100LL, 32).message(),
            "K = 100 is not a multiple of 32");
  EXPECT_EQ(errorf("%s", "").message(), "");
  EXPECT_EQ(errorf("%0300d", 1).message().size(), 300u); // longer than any stack buffer
}

struct Base {
  virtual ~Base() = default;
  virtual int id() const { return 1; }
};
struct Derived : Base {
  int id() const override { return 2; }
};

Expected<std::unique_ptr<Base>> make(bool ok) {
  if (!ok)
    return makeError("no object");
  return std::make_unique<Derived>(); // converts like a return of the value would
}

TEST(Expected, HoldsAValueOrAnError) {
  Expected<std::unique_ptr<Base>> a = make(true);
  ASSERT_TRUE(a);
  EXPECT_EQ((*a)->id(), 2);
  EXPECT_FALSE(a.takeError()); // success when it holds a value
  Expected<std::unique_ptr<Base>> b = make(false);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.takeError().message(), "no object");

  Expected<std::optional<int>> miss = std::optional<int>();
  ASSERT_TRUE(miss);
  EXPECT_FALSE(miss->has_value());
  Expected<std::string> s = std::string("abc");
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(*s, "abc");
}

TEST(Span, ViewsVectorsArraysAndPointers) {
  std::vector<uint16_t> v = {1, 2, 3, 4};
  Span<uint16_t> a = v;
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(a[2], 3);
  Span<uint16_t> mid = a.slice(1, 2);
  EXPECT_EQ(std::vector<uint16_t>(mid.begin(), mid.end()), (std::vector<uint16_t>{2, 3}));
  static const int arr[] = {5, 6};
  Span<int> b = arr;
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(*b.begin(), 5);
  Span<int> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(Span<uint16_t>(v.data() + 1, 3).end(), v.data() + 4);
}

TEST(StrCat, AppendsStringsCharactersAndIntegers) {
  std::string_view sv = "view";
  EXPECT_EQ(strCat("a", std::string("b"), sv, 'c', int64_t(-5), uint8_t(200), size_t(7)),
            "abviewc-52007");
  EXPECT_EQ(strCat(), "");
}

} // namespace
