//===- TilePasses.h - mxtile lowering passes ---------------------*- C++ -*-===//
#ifndef MXFP4_DIALECT_TILE_TILEPASSES_H
#define MXFP4_DIALECT_TILE_TILEPASSES_H

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mxfp4::tile {

#define GEN_PASS_DECL
#include "mxfp4/Dialect/Tile/TilePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "mxfp4/Dialect/Tile/TilePasses.h.inc"

} // namespace mxfp4::tile

#endif // MXFP4_DIALECT_TILE_TILEPASSES_H
