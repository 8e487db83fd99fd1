//===- E8M0Emitter.h - Scale rounding as IR ---------------------*- C++ -*-===//
//
// Emits the four scale-rounding modes of docs/Numerics.md as integer
// arithmetic on i32 values, for every target. Bit-identical to
// mxfp4::scaleFromAmax by construction (same integer forms).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_E8M0EMITTER_H
#define MXFP4_CONVERSION_E8M0EMITTER_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/IR/Builders.h"

namespace mxfp4 {

/// The E8M0 code (i32 in 0..255) for a block whose |x| maximum has the f32
/// bit pattern `amaxBits` (i32, sign clear).
mlir::Value emitScaleFromAmax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value amaxBits,
                              tile::ScaleRoundingKind mode);

/// The f32 dequantization scale 2^(code-127) for an i32 code: code 0 gives
/// 2^-127 (f32 bits 0x00400000), 0xFF gives NaN.
mlir::Value emitDequantScale(mlir::OpBuilder &b, mlir::Location loc, mlir::Value code);

} // namespace mxfp4

#endif // MXFP4_CONVERSION_E8M0EMITTER_H
