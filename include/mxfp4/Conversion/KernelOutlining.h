//===- KernelOutlining.h - Where lowered kernels go --------------*- C++ -*-===//
//
// Every target lowering finds the mxtile kernels of a module and emits their
// gpu.funcs into one gpu.module carrying the target attribute.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_KERNELOUTLINING_H
#define MXFP4_CONVERSION_KERNELOUTLINING_H

#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mxfp4 {

/// The func.func ops marked mxtile.kernel, in order.
inline llvm::SmallVector<mlir::func::FuncOp> collectKernels(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::func::FuncOp> kernels;
  module.walk([&](mlir::func::FuncOp f) {
    if (f->hasAttr(tile::TileDialect::getKernelAttrName()))
      kernels.push_back(f);
  });
  return kernels;
}

/// A gpu.module "mxfp4_kernels" for `target` at the end of `module`, which
/// becomes a GPU container module.
inline mlir::gpu::GPUModuleOp createKernelModule(mlir::ModuleOp module, mlir::Attribute target) {
  mlir::MLIRContext *ctx = module.getContext();
  module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), mlir::UnitAttr::get(ctx));
  mlir::OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  return mlir::gpu::GPUModuleOp::create(b, module.getLoc(), "mxfp4_kernels",
                                        b.getArrayAttr({target}));
}

} // namespace mxfp4

#endif // MXFP4_CONVERSION_KERNELOUTLINING_H
