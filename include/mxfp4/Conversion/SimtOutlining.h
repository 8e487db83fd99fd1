//===- SimtOutlining.h - SIMT kernels into the target module ------*- C++ -*-===//
//
// A SIMT kernel (a func.func marked mxtile.simt: upstream gpu, scf, arith
// and memref ops, no tiles; e.g. Kernels/MoeSort.h) is the same program on
// every target: outlining moves its body into a gpu.func of the target's
// gpu.module as it is, and the upstream conversions (gpu to NVVM or ROCDL)
// lower it. Global buffers (memref<?xT>) become bare pointers; arguments in
// the workgroup address space become the gpu.func's workgroup buffers and
// are not passed at launch.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_CONVERSION_SIMTOUTLINING_H
#define MXFP4_CONVERSION_SIMTOUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mxfp4 {

/// Whether `kernel` is a SIMT kernel.
bool isSimtKernel(mlir::func::FuncOp kernel);

/// Outlines SIMT `kernel` into `gpuModule` and erases it.
mlir::LogicalResult outlineSimtKernel(mlir::func::FuncOp kernel, mlir::gpu::GPUModuleOp gpuModule);

/// Replaces every f32 math.exp2 marked `afn` (approximate is fine) in
/// `gpuModule` with the target's exp2 instruction, which `select` builds
/// (ex2.approx.f32, v_exp_f32): the upstream conversions would call a
/// device library (libdevice, ocml) that the JIT does not link.
void selectApproximateExp2(
    mlir::gpu::GPUModuleOp gpuModule,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)> select);

} // namespace mxfp4

#endif // MXFP4_CONVERSION_SIMTOUTLINING_H
