//===- WaveOps.cpp - The wave-level AMDGPU instructions, on the CPU -------===//

#include "WaveOps.h"

#include <cmath>
#include <limits>

namespace mxfp4::amdsim {

float e2m1Value(uint8_t code) {
  static const float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  float v = kMagnitude[code & 7];
  return (code & 8) ? -v : v;
}

uint8_t roundToE2M1(float x) {
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  const float a = std::fabs(x);
  if (std::isnan(a) || a >= 6.0f)
    return sign | 7;
  // Midpoints between neighbouring codes; a tie goes to the even code.
  static const float kMid[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  uint8_t code = 0;
  while (code < 7 && a > kMid[code])
    ++code;
  if (code < 7 && a == kMid[code] && (code & 1))
    ++code;
  return sign | code;
}

namespace {

double e8m0(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, int(code) - 127);
}

uint8_t nibble(const uint32_t *regs, unsigned reg, unsigned index) {
  return uint8_t((regs[reg] >> (4 * index)) & 0xF);
}

struct Shape {
  unsigned m, n, k, lanes, acc;
};

Shape shapeOf(ScaledMma kind) {
  switch (kind) {
  case ScaledMma::Mfma16x16x128:
    return {16, 16, 128, 64, 4};
  case ScaledMma::Mfma32x32x64:
    return {32, 32, 64, 64, 16};
  case ScaledMma::Wmma16x16x128:
    return {16, 16, 128, 32, 8};
  }
  return {};
}

} // namespace

Expected<std::vector<float>> scaledMma(ScaledMma kind, const ScaledMmaLanes &in) {
  const Shape s = shapeOf(kind);
  const bool wmma = kind == ScaledMma::Wmma16x16x128;
  if (in.lanes != s.lanes)
    return makeError("amdgpu-sim: the scaled MMA needs ", s.lanes, " lanes, got ", in.lanes);
  if (in.formatA != 4 || in.formatB != 4)
    return makeError("amdgpu-sim: scaled MMA operand formats ", in.formatA, "/", in.formatB,
                     " are not modelled (only E2M1, 4)");
  if (in.accumulators != s.acc)
    return makeError("amdgpu-sim: the scaled MMA accumulates ", s.acc, " floats per lane, got ",
                     in.accumulators);
  const unsigned needRegs = wmma ? 8 : 4;
  if (in.regsA < needRegs || in.regsB < needRegs)
    return makeError("amdgpu-sim: FP4 operands need ", needRegs, " registers per lane");
  if (wmma ? (in.selA > 1 || in.selB > 1 || in.scaleFormatA || in.scaleFormatB)
           : (in.selA > 3 || in.selB > 3 || in.selA < 0 || in.selB < 0))
    return makeError("amdgpu-sim: scale selector ", in.selA, "/", in.selB, " or format ",
                     in.scaleFormatA, "/", in.scaleFormatB, " is not modelled");

  // Where element (row or column r, k) of A or B lives: lane and nibble.
  auto locate = [&](unsigned r, unsigned k, unsigned &lane, unsigned &reg, unsigned &index) {
    if (wmma) {
      lane = r + 16 * ((k / 32) % 2);
      reg = 4 * (k / 64) + (k % 32) / 8;
    } else {
      lane = r + s.m * (k / 32);
      reg = (k % 32) / 8;
    }
    index = k % 8;
  };
  auto scaleOf = [&](const std::vector<uint32_t> &scales, int sel, unsigned r, unsigned kb) {
    if (wmma)
      return uint8_t(scales[r + 16 * unsigned(sel)] >> (8 * kb));
    return uint8_t(scales[r + s.m * kb] >> (8 * unsigned(sel)));
  };

  // The scaled values of A's rows or B's columns, [rows][K].
  auto decode = [&](const std::vector<uint32_t> &regs, unsigned regsPerLane,
                    const std::vector<uint32_t> &scales, int sel, unsigned rows) {
    std::vector<double> out(size_t(rows) * s.k);
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned k = 0; k < s.k; ++k) {
        unsigned lane, reg, index;
        locate(r, k, lane, reg, index);
        out[r * s.k + k] = e2m1Value(nibble(&regs[size_t(lane) * regsPerLane], reg, index)) *
                           e8m0(scaleOf(scales, sel, r, k / 32));
      }
    return out;
  };
  const std::vector<double> a = decode(in.a, in.regsA, in.scaleA, in.selA, s.m);
  const std::vector<double> b = decode(in.b, in.regsB, in.scaleB, in.selB, s.n);

  std::vector<float> d(size_t(s.lanes) * s.acc);
  for (unsigned lane = 0; lane < s.lanes; ++lane)
    for (unsigned j = 0; j < s.acc; ++j) {
      unsigned row = 0, col = lane % s.n;
      switch (kind) {
      case ScaledMma::Mfma16x16x128:
        row = 4 * (lane / 16) + j;
        break;
      case ScaledMma::Mfma32x32x64:
        row = 8 * (j / 4) + 4 * (lane / 32) + j % 4;
        break;
      case ScaledMma::Wmma16x16x128:
        row = 8 * (lane / 16) + j;
        break;
      }
      // Products of E2M1 values and powers of two are exact; the sum is
      // exact too unless the exponents spread over more than double holds.
      double sum = in.c[size_t(lane) * s.acc + j];
      for (unsigned k = 0; k < s.k; ++k)
        sum += a[row * s.k + k] * b[col * s.k + k];
      d[size_t(lane) * s.acc + j] = float(sum);
    }
  return d;
}

Expected<unsigned> swizzleSource(unsigned lane, uint32_t offset) {
  offset &= 0xFFFF;
  if (!(offset & 0x8000)) {
    const unsigned andMask = offset & 0x1F, orMask = (offset >> 5) & 0x1F,
                   xorMask = (offset >> 10) & 0x1F;
    return ((((lane & 0x1F) & andMask) | orMask) ^ xorMask) | (lane & ~0x1Fu);
  }
  if (offset >= 0xC000 || (offset & 0xFF00) != 0x8000)
    return makeError("amdgpu-sim: ds_swizzle offset ", offset,
                     " (rotate or FFT mode) is not modelled");
  return (lane & ~3u) | ((offset >> (2 * (lane & 3))) & 3);
}

} // namespace mxfp4::amdsim
