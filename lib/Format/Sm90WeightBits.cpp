//===- Sm90WeightBits.cpp - Bit order of sm_90a weight words --------------===//

#include "mxfp4/Format/Sm90WeightBits.h"

namespace mxfp4 {

uint32_t sm90PackWeightWord(uint32_t nibbles) {
  uint32_t word = 0;
  for (int i = 0; i < 32; ++i)
    word |= ((nibbles >> i) & 1u) << kSm90WeightBit[i];
  return word;
}

uint32_t sm90UnpackWeightWord(uint32_t word) {
  uint32_t nibbles = 0;
  for (int i = 0; i < 32; ++i)
    nibbles |= ((word >> kSm90WeightBit[i]) & 1u) << i;
  return nibbles;
}

uint32_t sm90WeightPairBits(uint32_t word, int j) {
  switch (j) {
  case 0:
    return word & kSm90PairFields;
  case 1:
    return (word << 4) & kSm90PairFields;
  case 2:
    return ((word >> 6) | (word << 26)) & kSm90PairFields;
  default:
    return ((word >> 2) & kSm90Pair3Low) | ((word << 6) & kSm90Pair3High);
  }
}

} // namespace mxfp4
