//===- AmdChip.cpp - The AMD chips and what they share --------------------===//

#include "AmdChip.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace mxfp4::amd {

const AmdChip &gfx950Chip();  // Gfx950Chip.cpp
const AmdChip &gfx1250Chip(); // Gfx1250Chip.cpp

const AmdChip *amdChip(Arch arch) {
  switch (arch) {
  case Arch::GFX950:
    return &gfx950Chip();
  case Arch::GFX1250:
    return &gfx1250Chip();
  case Arch::SM90A:
    return nullptr;
  }
  return nullptr;
}

Value loadScaleDword(ImplicitLocOpBuilder &b, Value mem, Value offset) {
  auto i8x4 = VectorType::get({4}, b.getI8Type());
  Value v = vector::LoadOp::create(b, i8x4, mem, ValueRange{offset});
  return arith::BitcastOp::create(b, VectorType::get({4}, b.getType<Float8E8M0FNUType>()), v);
}

} // namespace mxfp4::amd
