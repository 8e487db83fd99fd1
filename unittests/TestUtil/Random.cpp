//===- Random.cpp - Seeded random inputs for tests ------------------------===//

#include "TestUtil/Random.h"
#include "mxfp4/Support/BF16.h"
#include "mxfp4/Support/Env.h"

#include <cstdio>

namespace mxfp4::test {

uint64_t freshSeed() {
  uint64_t seed;
  if (std::optional<uint64_t> s = env::testSeed())
    seed = *s;
  else
    seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("[ seed     ] MXFP4_TEST_SEED=%llu\n", (unsigned long long)seed);
  return seed;
}

std::vector<uint16_t> randomBf16(std::mt19937_64 &rng, size_t count, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<uint16_t> out(count);
  for (uint16_t &v : out)
    v = floatToBf16(normal(rng));
  return out;
}

std::vector<uint8_t> randomBytes(std::mt19937_64 &rng, size_t count) {
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> out(count);
  for (uint8_t &v : out)
    v = uint8_t(dist(rng));
  return out;
}

std::vector<uint8_t> randomScales(std::mt19937_64 &rng, size_t count, uint8_t lo, uint8_t hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<uint8_t> out(count);
  for (uint8_t &v : out)
    v = uint8_t(dist(rng));
  return out;
}

} // namespace mxfp4::test
