//===- E8M0.cpp - MXFP4 block scales and the scale-rounding modes ---------===//
//
// Each mode is written in integer arithmetic on f32 bit patterns, the way its
// source computes it, so that GPU code can reproduce it bit for bit.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace mxfp4 {

static constexpr ScaleRounding kAllModes[] = {ScaleRounding::RoundUp, ScaleRounding::Even,
                                              ScaleRounding::Floor, ScaleRounding::Nearest};

Span<ScaleRounding> allScaleRoundings() { return kAllModes; }

std::string_view toString(ScaleRounding mode) {
  switch (mode) {
  case ScaleRounding::RoundUp:
    return "roundup";
  case ScaleRounding::Even:
    return "even";
  case ScaleRounding::Floor:
    return "floor";
  case ScaleRounding::Nearest:
    return "nearest";
  }
  return "invalid";
}

std::optional<ScaleRounding> parseScaleRounding(std::string_view name) {
  for (ScaleRounding mode : kAllModes) {
    std::string_view want = toString(mode);
    if (name.size() == want.size() &&
        std::equal(name.begin(), name.end(), want.begin(),
                   [](char a, char b) { return std::tolower((unsigned char)a) == b; }))
      return mode;
  }
  return std::nullopt;
}

static uint32_t expField(uint32_t bits) { return (bits >> 23) & 0xFF; }

/// AITER HIP RoundUp: w = amax * fl(1/6) in f32; take w's exponent and bump it
/// when w is not a power of two. NaN/Inf keep exponent 0xFF (the NaN code).
/// For finite f32 amax the result is at most 253, so it never overflows.
static uint8_t roundUp(uint32_t amaxBits) {
  constexpr uint32_t kOneSixthBits = 0x3E2AAAABu; // fl(1/6)
  uint32_t w = floatBits(bitsToFloat(amaxBits) * bitsToFloat(kOneSixthBits));
  uint32_t e = expField(w);
  bool inexact = (w & 0x7FFFFFu) != 0;
  return uint8_t(e + (inexact && e < 0xFF ? 1 : 0));
}

/// AITER Triton dynamic_mxfp4_quant: round amax half-up at one mantissa bit,
/// e = floor(log2) - 2, clamped to [-127, 127]. Never emits 0xFF: Inf and NaN
/// amax become Inf after the add and clamp to 254.
static uint8_t even(uint32_t amaxBits) {
  uint32_t rounded = (amaxBits + 0x200000u) & 0xFF800000u;
  uint32_t e = expField(rounded);
  if (e == 0) // zero (or rounded-away subnormal): log2 = -inf
    return 0;
  if (e == 0xFF)
    return 254;
  int32_t exp = int32_t(e) - 127 - 2;
  return uint8_t(std::clamp(exp, -127, 127) + 127);
}

/// OCP MX v1.0 / microxcaling: e = floor(log2(amax)) - emax(=2), clamped
/// below at -127; Inf/NaN give NaN. Subnormal amax uses its true log2.
static uint8_t floorMode(uint32_t amaxBits) {
  uint32_t e = expField(amaxBits);
  if (e == 0xFF)
    return kE8M0NaN;
  int32_t log2Floor;
  if (e != 0)
    log2Floor = int32_t(e) - 127;
  else if ((amaxBits & 0x7FFFFFu) != 0) // subnormal: position of the top bit
    log2Floor = -149 + int32_t(31 - __builtin_clz(amaxBits & 0x7FFFFFu));
  else
    log2Floor = -126; // microxcaling maps amax == 0 to FP32_MIN_NORMAL
  return uint8_t(std::max(log2Floor - 2, -127) + 127);
}

/// Legacy AITER / FlyDSL fused stage-1: round amax to the nearest power of two
/// with threshold 1.5 (add half the exponent step), then divide by 4, floored
/// at code 0. Inf and NaN come out as 253.
static uint8_t nearest(uint32_t amaxBits) {
  uint32_t rounded = (amaxBits + 0x400000u) & 0xFF800000u;
  return uint8_t(std::max<int32_t>(int32_t(expField(rounded)) - 2, 0));
}

uint8_t scaleFromAmax(uint32_t amaxBits, ScaleRounding mode) {
  amaxBits &= 0x7FFFFFFFu;
  switch (mode) {
  case ScaleRounding::RoundUp:
    return roundUp(amaxBits);
  case ScaleRounding::Even:
    return even(amaxBits);
  case ScaleRounding::Floor:
    return floorMode(amaxBits);
  case ScaleRounding::Nearest:
    return nearest(amaxBits);
  }
  return kE8M0NaN;
}

double decodeE8M0(uint8_t code) {
  if (code == kE8M0NaN)
    return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, int(code) - 127);
}

} // namespace mxfp4
