//===- Sm90WeightBits.h - Bit order of sm_90a weight words ------*- C++ -*-===//
//
// The sm90-mma16 weight layout (Layout.h) puts a thread's 16 bytes of a row
// where its wgmma fragment wants them; inside each 32-bit word it also
// reorders the bits, so that the kernel turns the word's four E2M1 nibble
// pairs (j, j+4) into bf16x2 fields (sign at bit 15, magnitude at bits 8-6
// of each half: the value times 2^-126) with fewer instructions than from
// plain nibbles: pair 0 by a mask, pair 1 by a shift and a mask, pair 2 by
// a rotation and a mask, pair 3 by two shifts merged under two masks (10
// integer instructions a word in PTX instead of 13). Nibble n, bit b (0: mantissa,
// 1-2: exponent, 3: sign) moves to bit kSm90WeightBit[4n + b].
// sm90WeightPairBits is the host model of the kernel's extraction
// (Conversion/TileToNVVM/Sm90Mma.cpp emits the same operations).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_SM90WEIGHTBITS_H
#define MXFP4_FORMAT_SM90WEIGHTBITS_H

#include <cstdint>

namespace mxfp4 {

inline constexpr uint8_t kSm90WeightBit[32] = {
    6,  7,  8,  15, // nibble 0: pair 0, low half (the fields themselves)
    2,  3,  4,  11, // nibble 1: pair 1, low half (4 bits below)
    12, 13, 14, 21, // nibble 2: pair 2, low half (6 bits above, rotated)
    0,  1,  10, 9,  // nibble 3: pair 3, low half (mantissa and low exponent 6
                    // below, high exponent 2 above, sign 6 below)
    22, 23, 24, 31, // nibble 4: pair 0, high half
    18, 19, 20, 27, // nibble 5: pair 1, high half
    28, 29, 30, 5,  // nibble 6: pair 2, high half (the sign wraps to bit 5)
    16, 17, 26, 25, // nibble 7: pair 3, high half
};

/// The bf16x2 fields of a nibble pair: sign (bit 15) and magnitude (bits
/// 8-6) of both halves; pair 3 merges its mantissa (bit 6) with the rest.
inline constexpr uint32_t kSm90PairFields = 0x81C081C0;
inline constexpr uint32_t kSm90Pair3Low = 0x01000100;  // (word >> 2): bit 8
inline constexpr uint32_t kSm90Pair3High = 0x80C080C0; // (word << 6): bits 15, 7-6

/// Plain packed nibbles (element n in bits 4n..4n+3) -> the stored word.
uint32_t sm90PackWeightWord(uint32_t nibbles);
/// The stored word -> plain packed nibbles.
uint32_t sm90UnpackWeightWord(uint32_t word);
/// The kernel's bf16x2 field bits of nibble pair (j, j + 4), j < 4, from a
/// stored word.
uint32_t sm90WeightPairBits(uint32_t word, int j);

} // namespace mxfp4

#endif // MXFP4_FORMAT_SM90WEIGHTBITS_H
