//===- Random.h - Seeded random inputs for tests ----------------*- C++ -*-===//
//
// Every randomized test draws a fresh seed, prints it, and replays it when
// MXFP4_TEST_SEED is set, so a failure seen once can be reproduced.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_RANDOM_H
#define MXFP4_UNITTESTS_TESTUTIL_RANDOM_H

#include "gtest/gtest.h"

#include <cstdint>
#include <random>
#include <vector>

namespace mxfp4::test {

/// MXFP4_TEST_SEED if set, else a fresh seed; printed to stdout either way.
uint64_t freshSeed();

/// BF16 bit patterns of N(0, sigma) values.
std::vector<uint16_t> randomBf16(std::mt19937_64 &rng, size_t count, float sigma = 1.0f);

/// Random bytes (packed E2M1 or any integer payload).
std::vector<uint8_t> randomBytes(std::mt19937_64 &rng, size_t count);

/// Random E8M0 codes in [lo, hi].
std::vector<uint8_t> randomScales(std::mt19937_64 &rng, size_t count, uint8_t lo = 117,
                                  uint8_t hi = 130);

/// A test fixture with a fresh (logged, replayable) seed and its engine.
class SeededTest : public ::testing::Test {
protected:
  void SetUp() override {
    seed = freshSeed();
    rng.seed(seed);
  }
  uint64_t seed = 0;
  std::mt19937_64 rng;
};

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_RANDOM_H
