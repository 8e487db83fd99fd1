//===- IndexMath.h - Index arithmetic and shared op lowerings ----*- C++ -*-===//
//
// What every target lowering emits the same way: index arithmetic that folds
// the trivial cases (x + 0, x * 1, x / 1) so the generated IR stays readable,
// mxtile.tile_id, and the scalar arith ops a kernel body computes indices
// with (cloned unchanged).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_INDEXMATH_H
#define MXFP4_CONVERSION_INDEXMATH_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4 {

inline mlir::Value idxConst(mlir::ImplicitLocOpBuilder &b, int64_t v) {
  return mlir::arith::ConstantIndexOp::create(b, v);
}
inline mlir::Value idxAdd(mlir::ImplicitLocOpBuilder &b, mlir::Value x, int64_t v) {
  return v == 0 ? x : mlir::arith::AddIOp::create(b, x, idxConst(b, v)).getResult();
}
inline mlir::Value idxAdd(mlir::ImplicitLocOpBuilder &b, mlir::Value x, mlir::Value y) {
  return mlir::arith::AddIOp::create(b, x, y);
}
inline mlir::Value idxMul(mlir::ImplicitLocOpBuilder &b, mlir::Value x, int64_t v) {
  return v == 1 ? x : mlir::arith::MulIOp::create(b, x, idxConst(b, v)).getResult();
}
inline mlir::Value idxDiv(mlir::ImplicitLocOpBuilder &b, mlir::Value x, int64_t v) {
  return v == 1 ? x : mlir::arith::DivUIOp::create(b, x, idxConst(b, v)).getResult();
}
inline mlir::Value idxRem(mlir::ImplicitLocOpBuilder &b, mlir::Value x, int64_t v) {
  return mlir::arith::RemUIOp::create(b, x, idxConst(b, v));
}
inline mlir::Value idxMul(mlir::ImplicitLocOpBuilder &b, mlir::Value x, mlir::Value y) {
  return mlir::arith::MulIOp::create(b, x, y);
}
inline mlir::Value idxDiv(mlir::ImplicitLocOpBuilder &b, mlir::Value x, mlir::Value y) {
  return mlir::arith::DivUIOp::create(b, x, y);
}
inline mlir::Value idxRem(mlir::ImplicitLocOpBuilder &b, mlir::Value x, mlir::Value y) {
  return mlir::arith::RemUIOp::create(b, x, y);
}

inline mlir::Value idxLess(mlir::ImplicitLocOpBuilder &b, mlir::Value x, mlir::Value y) {
  return mlir::arith::CmpIOp::create(b, mlir::arith::CmpIPredicate::ult, x, y);
}

/// Whether a kernel whose tiles cover `covered(ld)` columns of a matrix of
/// `ld` columns reaches past it (a K or N tail whose columns the loads zero
/// and the stores drop); an ld that is not a constant may.
inline bool hasTail(mlir::Value ld, llvm::function_ref<int64_t(int64_t)> covered) {
  std::optional<int64_t> c = mlir::getConstantIntValue(ld);
  return !c || covered(*c) != *c;
}
/// The same for tiles of `tileCols` columns.
inline bool hasTail(mlir::Value ld, int64_t tileCols) {
  return hasTail(ld, [&](int64_t c) { return (c + tileCols - 1) / tileCols * tileCols; });
}

/// mxtile.tile_id d is the workgroup id along x, y or z.
inline mlir::Value lowerTileId(mlir::ImplicitLocOpBuilder &b, tile::TileIdOp op) {
  const mlir::gpu::Dimension dims[] = {mlir::gpu::Dimension::x, mlir::gpu::Dimension::y,
                                       mlir::gpu::Dimension::z};
  return mlir::gpu::BlockIdOp::create(b, dims[op.getDim()]);
}

/// Scalar arith ops (index math in the kernel body) are cloned unchanged.
inline bool isScalarArith(mlir::Operation *op) {
  return op->getNumRegions() == 0 && mlir::isa<mlir::arith::ArithDialect>(op->getDialect()) &&
         llvm::none_of(op->getResultTypes(),
                       [](mlir::Type t) { return mlir::isa<tile::TileType>(t); });
}

} // namespace mxfp4

#endif // MXFP4_CONVERSION_INDEXMATH_H
