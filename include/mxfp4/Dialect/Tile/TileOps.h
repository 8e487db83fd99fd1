//===- TileOps.h - mxtile types, attributes and operations -------*- C++ -*-===//
#ifndef MXFP4_DIALECT_TILE_TILEOPS_H
#define MXFP4_DIALECT_TILE_TILEOPS_H

#include "mxfp4/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mxfp4/Dialect/Tile/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mxfp4/Dialect/Tile/TileTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/Tile/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "mxfp4/Dialect/Tile/TileOps.h.inc"

#endif // MXFP4_DIALECT_TILE_TILEOPS_H
