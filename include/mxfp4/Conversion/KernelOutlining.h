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

/// The gpu.func of `kernel` (same name and location) at the end of
/// `gpuModule`: a kernel with `args`, the workgroup buffers `workgroup` and
/// `threads` threads a workgroup.
inline mlir::gpu::GPUFuncOp createKernelFunc(mlir::gpu::GPUModuleOp gpuModule,
                                             mlir::func::FuncOp kernel, mlir::TypeRange args,
                                             mlir::TypeRange workgroup, int32_t threads) {
  mlir::OpBuilder b(kernel.getContext());
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto func = mlir::gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                           b.getFunctionType(args, {}), workgroup,
                                           mlir::TypeRange{});
  func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  return func;
}

} // namespace mxfp4

#endif // MXFP4_CONVERSION_KERNELOUTLINING_H
