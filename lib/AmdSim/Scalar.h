//===- Scalar.h - The simulator's element arithmetic -------------*- C++ -*-===//
//
// One element of an LLVM IR value as the simulator holds it: its bits in a
// 64-bit word (Program.h). Integer operations, comparisons and the repacking
// of a bitcast, shared by the lanes' operations (Execute.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_AMDSIM_SCALAR_H
#define MXFP4_LIB_AMDSIM_SCALAR_H

#include "Program.h"

#include <cstdint>
#include <vector>

namespace mxfp4::amdsim {

/// The low `bits` bits of `v`.
uint64_t maskBits(uint64_t v, unsigned bits);
/// `v`'s low `bits` bits as a signed integer.
int64_t signExtend(uint64_t v, unsigned bits);
float halfToFloat(uint16_t h);
/// The value of a float element of type `t` (exact).
double toDouble(uint64_t v, Ty t);
uint64_t doubleBits(double d);
/// `x code y` on `bits`-wide integers; `undefined` set where LLVM says
/// poison or UB (division by zero, INT_MIN / -1, shifts past the width).
uint64_t intBinary(Code code, uint64_t x, uint64_t y, unsigned bits, bool &undefined);
/// icmp and fcmp with an llvm::CmpInst::Predicate.
bool intCompare(int64_t predicate, uint64_t x, uint64_t y, unsigned bits);
bool floatCompare(int64_t predicate, double x, double y);
/// The value an atomicrmw of llvm::AtomicRMWInst::BinOp `binOp` stores over
/// `x` with operand `y`; `unknown` set for operations not modelled.
uint64_t atomicCombine(int64_t binOp, uint64_t x, uint64_t y, unsigned bits, bool &unknown);
/// `count` elements of `bits` bits, packed little-endian into bytes, and back.
void packBits(const uint64_t *elements, uint32_t count, unsigned bits, std::vector<uint8_t> &out);
void unpackBits(const std::vector<uint8_t> &in, uint32_t count, unsigned bits, uint64_t *elements);

} // namespace mxfp4::amdsim

#endif // MXFP4_LIB_AMDSIM_SCALAR_H
