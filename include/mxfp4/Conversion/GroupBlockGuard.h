//===- GroupBlockGuard.h - mxtile.group_block as a guard ---------*- C++ -*-===//
//
// Both lowerings turn a grouped GEMM's mxtile.group_block into the same
// uniform code: the block's group (its expert) and the valid row count are
// loaded, and a block past the valid rows, or of no group (< 0), skips the
// rest of the kernel inside one scf.if.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_GROUPBLOCKGUARD_H
#define MXFP4_CONVERSION_GROUPBLOCKGUARD_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4 {

/// Emits `op` for row blocks of `bm` rows: maps its results (group as an
/// index, rows) in `mapping` and returns the guard, with `b` at the start
/// of its then block; the kernel's return goes after it.
mlir::scf::IfOp emitGroupBlockGuard(mlir::ImplicitLocOpBuilder &b, tile::GroupBlockOp op,
                                    mlir::IRMapping &mapping, int64_t bm);

} // namespace mxfp4

#endif // MXFP4_CONVERSION_GROUPBLOCKGUARD_H
