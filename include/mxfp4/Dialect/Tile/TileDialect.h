//===- TileDialect.h - The mxtile dialect ------------------------*- C++ -*-===//
#ifndef MXFP4_DIALECT_TILE_TILEDIALECT_H
#define MXFP4_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dialect.h"
#include "mxfp4/Kernels/Schedule.h"

#include "mxfp4/Dialect/Tile/TileDialect.h.inc"

#endif // MXFP4_DIALECT_TILE_TILEDIALECT_H
