//===- Sm90WeightBitsTest.cpp - Bit order of sm_90a weight words ----------===//
//
// The stored word's bit order is a permutation, and the kernel's extraction
// (modelled by sm90WeightPairBits) gives, for every pair and every word,
// the fields the plain nibbles stand for: sign at bit 15, magnitude at bits
// 8-6 of each half.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/Layout.h"
#include "mxfp4/Format/Sm90WeightBits.h"

#include "TestUtil/Random.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

using namespace mxfp4;

namespace {

/// Nibbles j and j + 4 of plain packed nibbles as bf16x2 fields.
uint32_t plainPairFields(uint32_t nibbles, int j) {
  auto field = [](uint32_t nibble) { return (nibble & 8u) << 12 | (nibble & 7u) << 6; };
  return field((nibbles >> (4 * j)) & 15u) | field((nibbles >> (4 * (j + 4))) & 15u) << 16;
}

TEST(Sm90WeightBitsOrder, IsAPermutation) {
  std::set<int> bits(std::begin(kSm90WeightBit), std::end(kSm90WeightBit));
  EXPECT_EQ(bits.size(), 32u);
  EXPECT_EQ(*bits.rbegin(), 31);
}

class Sm90WeightBits : public test::SeededTest {};

TEST_F(Sm90WeightBits, ExtractionGivesThePlainFields) {
  std::vector<uint32_t> words;
  for (uint32_t i = 0; i < 32; ++i) // every single bit
    words.push_back(1u << i);
  for (int i = 0; i < 100000; ++i)
    words.push_back(uint32_t(rng()));
  for (uint32_t w : words) {
    const uint32_t stored = sm90PackWeightWord(w);
    ASSERT_EQ(sm90UnpackWeightWord(stored), w);
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(sm90WeightPairBits(stored, j), plainPairFields(w, j))
          << "word 0x" << std::hex << w << " pair " << j << " seed " << std::dec << seed;
  }
}

TEST_F(Sm90WeightBits, ShuffleReordersEveryWordAndUnshuffleUndoesIt) {
  const int64_t n = 32, kBytes = 128;
  std::vector<uint8_t> w(size_t(n * kBytes));
  for (auto &b : w)
    b = uint8_t(rng());
  auto stored = shuffleWeight(WeightLayout::Sm90Mma16, w, n, kBytes);
  ASSERT_TRUE(bool(stored));
  // Byte (row, kb) lands at weightOffset; its word then has its bits reordered.
  for (int64_t row = 0; row < n; ++row)
    for (int64_t kb = 0; kb < kBytes; kb += 4) {
      const int64_t at = weightOffset(WeightLayout::Sm90Mma16, kBytes, row, kb);
      ASSERT_EQ(at % 4, 0);
      uint32_t plain = 0, got = 0;
      for (int b = 0; b < 4; ++b) {
        ASSERT_EQ(weightOffset(WeightLayout::Sm90Mma16, kBytes, row, kb + b), at + b);
        plain |= uint32_t(w[size_t(row * kBytes + kb + b)]) << (8 * b);
        got |= uint32_t((*stored)[size_t(at + b)]) << (8 * b);
      }
      ASSERT_EQ(got, sm90PackWeightWord(plain));
    }
  auto back = unshuffleWeight(WeightLayout::Sm90Mma16, *stored, n, kBytes);
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(*back, w);
}

} // namespace
