//===- GemmA4W4.h - The dense A4W4 GEMM tile program -------------*- C++ -*-===//
//
// C[M, N] (bf16) = act(quantize_mxfp4(A[M, K] bf16) * W[N, K]^T), W packed
// E2M1 with E8M0 scales in the target's preshuffled layouts (seed 000). N and
// K are compile-time constants; M is a run-time argument with masked tails.
// Kernel arguments, in order: A (bf16), W (i8), W scales (i8), C (bf16), M (i32),
// with the bf16dq epilogue the dump buffers for packed E2M1 codes [M, K/2]
// and E8M0 scales [M, K/32] (i8), and with split-K > 1 the f32 workspace
// [M, N] and the i32 tile counters [ceil(M/BM) * N/BN], both zero on entry
// and left zero. Grid z = split-K.
// Grid: x = N / BN tiles, y = ceil(M / BM) tiles; block: the target's threads.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_GEMMA4W4_H
#define MXFP4_KERNELS_GEMMA4W4_H

#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"

namespace mxfp4 {

/// Appends the kernel's tile program (a func.func marked mxtile.kernel, named
/// spec.name()) to `module`. The spec must be verified.
void buildGemmA4W4(mlir::ModuleOp module, const KernelSpec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_GEMMA4W4_H
