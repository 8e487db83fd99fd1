//===- ActivationEmitter.h - Epilogue activations as IR ----------*- C++ -*-===//
//
// The math of mxtile.activation on one vector of f32 accumulators, shared by
// every target: exp lowers natively everywhere; tanh is written with exp so
// that no device math library (ROCm ocml, libdevice) is needed.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_ACTIVATIONEMITTER_H
#define MXFP4_CONVERSION_ACTIVATIONEMITTER_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4 {

/// act(gate[, up]) elementwise; `gate` (and `up`) are vectors of f32.
mlir::Value emitActivation(mlir::ImplicitLocOpBuilder &b, tile::ActivationOp op,
                           mlir::Value gate, mlir::Value up);

} // namespace mxfp4

#endif // MXFP4_CONVERSION_ACTIVATIONEMITTER_H
