//===- HashTest.cpp - XXH64 against published vectors and LLVM's ----------===//

#include "mxfp4/Support/Hash.h"

#include "TestUtil/Random.h"

#include "llvm/Support/xxhash.h"
#include "gtest/gtest.h"

#include <random>
#include <string>

using namespace mxfp4;

namespace {

TEST(Hash, PublishedVectors) {
  EXPECT_EQ(xxh64(""), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64("a"), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(xxh64("abc"), 0x44BC2CF5AD770999ull);
}

// Every length up to 300 (all tail paths, one to nine 32-byte stripes) and
// a few large ones, on random bytes, equal LLVM's xxHash64.
TEST(Hash, MatchesLLVMOnRandomInputs) {
  std::mt19937_64 rng(test::freshSeed());
  std::vector<uint8_t> bytes = test::randomBytes(rng, 70000);
  std::string data(bytes.begin(), bytes.end());
  for (size_t n = 0; n <= 300; ++n)
    ASSERT_EQ(xxh64(std::string_view(data.data(), n)),
              llvm::xxHash64(llvm::StringRef(data.data(), n)))
        << "length " << n;
  for (size_t n : {1023u, 4096u, 65537u, 70000u})
    ASSERT_EQ(xxh64(std::string_view(data.data(), n)),
              llvm::xxHash64(llvm::StringRef(data.data(), n)))
        << "length " << n;
}

TEST(Hash, SeedChangesTheHash) { EXPECT_NE(xxh64("kernel", 6, 0), xxh64("kernel", 6, 1)); }

} // namespace
