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
  constexpr uint32_t kFields = 0x81C081C0; // sign and magnitude of both halves
  switch (j) {
  case 0:
    return word & kFields;
  case 1:
    return (word << 4) & kFields;
  case 2:
    return ((word >> 6) | (word << 26)) & kFields;
  default:
    return ((word >> 2) & 0x01000100) | ((word << 6) & 0x80C080C0);
  }
}

} // namespace mxfp4
