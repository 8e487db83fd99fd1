//===- Scalar.cpp - The simulator's element arithmetic --------------------===//

#include "Scalar.h"

#include "mxfp4/Support/BF16.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mxfp4::amdsim {

uint64_t maskBits(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1);
}

int64_t signExtend(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return int64_t(v);
  const unsigned shift = 64 - bits;
  return int64_t(v << shift) >> shift;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const int exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return bitsToFloat(floatBits(magnitude) | sign);
}

double toDouble(uint64_t v, Ty t) {
  switch (t) {
  case Ty::BF16:
    return bf16ToFloat(uint16_t(v));
  case Ty::F16:
    return halfToFloat(uint16_t(v));
  case Ty::F32:
    return bitsToFloat(uint32_t(v));
  case Ty::F64: {
    double d;
    std::memcpy(&d, &v, sizeof d);
    return d;
  }
  default:
    return double(v);
  }
}

uint64_t doubleBits(double d) {
  uint64_t v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}

uint64_t intBinary(Code code, uint64_t x, uint64_t y, unsigned bits, bool &undefined) {
  switch (code) {
  case Code::Add:
    return x + y;
  case Code::Sub:
    return x - y;
  case Code::Mul:
    return x * y;
  case Code::UDiv:
  case Code::URem:
    if (maskBits(y, bits) == 0) {
      undefined = true;
      return 0;
    }
    return code == Code::UDiv ? maskBits(x, bits) / maskBits(y, bits)
                              : maskBits(x, bits) % maskBits(y, bits);
  case Code::SDiv:
  case Code::SRem: {
    const int64_t sx = signExtend(x, bits), sy = signExtend(y, bits);
    if (sy == 0 || (sy == -1 && sx == signExtend(uint64_t(1) << (bits - 1), bits))) {
      undefined = true;
      return 0;
    }
    return uint64_t(code == Code::SDiv ? sx / sy : sx % sy);
  }
  case Code::Shl:
  case Code::LShr:
  case Code::AShr:
    if (y >= bits) {
      undefined = true;
      return 0;
    }
    if (code == Code::Shl)
      return x << y;
    if (code == Code::LShr)
      return maskBits(x, bits) >> y;
    return uint64_t(signExtend(x, bits) >> y);
  case Code::And:
    return x & y;
  case Code::Or:
    return x | y;
  case Code::Xor:
    return x ^ y;
  default:
    undefined = true;
    return 0;
  }
}

bool intCompare(int64_t predicate, uint64_t x, uint64_t y, unsigned bits) {
  using P = llvm::CmpInst::Predicate;
  const uint64_t ux = maskBits(x, bits), uy = maskBits(y, bits);
  const int64_t sx = signExtend(x, bits), sy = signExtend(y, bits);
  switch (P(predicate)) {
  case P::ICMP_EQ:
    return ux == uy;
  case P::ICMP_NE:
    return ux != uy;
  case P::ICMP_UGT:
    return ux > uy;
  case P::ICMP_UGE:
    return ux >= uy;
  case P::ICMP_ULT:
    return ux < uy;
  case P::ICMP_ULE:
    return ux <= uy;
  case P::ICMP_SGT:
    return sx > sy;
  case P::ICMP_SGE:
    return sx >= sy;
  case P::ICMP_SLT:
    return sx < sy;
  case P::ICMP_SLE:
    return sx <= sy;
  default:
    return false;
  }
}

bool floatCompare(int64_t predicate, double x, double y) {
  using P = llvm::CmpInst::Predicate;
  const bool unordered = std::isnan(x) || std::isnan(y);
  switch (P(predicate)) {
  case P::FCMP_FALSE:
    return false;
  case P::FCMP_TRUE:
    return true;
  case P::FCMP_ORD:
    return !unordered;
  case P::FCMP_UNO:
    return unordered;
  case P::FCMP_OEQ:
    return !unordered && x == y;
  case P::FCMP_OGT:
    return !unordered && x > y;
  case P::FCMP_OGE:
    return !unordered && x >= y;
  case P::FCMP_OLT:
    return !unordered && x < y;
  case P::FCMP_OLE:
    return !unordered && x <= y;
  case P::FCMP_ONE:
    return !unordered && x != y;
  case P::FCMP_UEQ:
    return unordered || x == y;
  case P::FCMP_UGT:
    return unordered || x > y;
  case P::FCMP_UGE:
    return unordered || x >= y;
  case P::FCMP_ULT:
    return unordered || x < y;
  case P::FCMP_ULE:
    return unordered || x <= y;
  case P::FCMP_UNE:
    return unordered || x != y;
  default:
    return false;
  }
}

/// Element `index` of `count` `bits`-wide elements packed little-endian.
void packBits(const uint64_t *elements, uint32_t count, unsigned bits, std::vector<uint8_t> &out) {
  out.assign((size_t(count) * bits + 7) / 8, 0);
  for (uint32_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < bits; ++b)
      if ((elements[i] >> b) & 1) {
        const size_t bit = size_t(i) * bits + b;
        out[bit / 8] |= uint8_t(1u << (bit % 8));
      }
}

void unpackBits(const std::vector<uint8_t> &in, uint32_t count, unsigned bits, uint64_t *elements) {
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (unsigned b = 0; b < bits; ++b) {
      const size_t bit = size_t(i) * bits + b;
      v |= uint64_t((in[bit / 8] >> (bit % 8)) & 1) << b;
    }
    elements[i] = v;
  }
}

uint64_t atomicCombine(int64_t binOp, uint64_t x, uint64_t y, unsigned bits, bool &unknown) {
  uint64_t r = 0;
  using B = llvm::AtomicRMWInst::BinOp;
  switch (B(binOp)) {
  case B::Xchg:
    r = y;
    break;
  case B::Add:
    r = x + y;
    break;
  case B::Sub:
    r = x - y;
    break;
  case B::And:
    r = x & y;
    break;
  case B::Or:
    r = x | y;
    break;
  case B::Xor:
    r = x ^ y;
    break;
  case B::Max:
    r = signExtend(x, bits) > signExtend(y, bits) ? x : y;
    break;
  case B::Min:
    r = signExtend(x, bits) < signExtend(y, bits) ? x : y;
    break;
  case B::UMax:
    r = std::max(x, y);
    break;
  case B::UMin:
    r = std::min(x, y);
    break;
  case B::FAdd:
    r = floatBits(bitsToFloat(uint32_t(x)) + bitsToFloat(uint32_t(y)));
    break;
  default:
    unknown = true;
    return 0;
  }
  return r;
}

} // namespace mxfp4::amdsim
