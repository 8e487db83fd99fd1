//===- GemmA4W4.h - The dense A4W4 GEMM and quantizer tile programs -*- C++ -*-===//
//
// C[M, N] (bf16) = act(quantize_mxfp4(A[M, K] bf16) * W[N, K]^T), W packed
// E2M1 with E8M0 scales in the target's preshuffled layouts (seed 000). N and
// K are compile-time constants; M is a run-time argument with masked tails.
// Kernel arguments, in order: A (bf16), W (i8), W scales (i8), on sm_90a the
// TMA descriptors of W and its scales (256 bytes, Kernels/Sm90Pipeline.h),
// C (bf16), M (i32), with the bf16dq epilogue the dump buffers for packed E2M1 codes [M, K/2]
// and E8M0 scales [M, K/32] (i8), and with split-K > 1 the f32 workspace
// [M, N] and the i32 tile counters [ceil(M/BM) * N/BN], both zero on entry
// and left zero. Grid z = split-K. Stream-K (sm_90a) takes the same two
// buffers: 2 x BM x BN f32 per workgroup, and the counters.
// Grid: x = N / BN tiles, y = ceil(M / BM) tiles; block: the target's threads.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_GEMMA4W4_H
#define MXFP4_KERNELS_GEMMA4W4_H

#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"

namespace mxfp4 {

/// Appends the kernel's tile program (a func.func marked mxtile.kernel, named
/// spec.name()) to `module`. The spec must be verified. gemm_mxa4w4 takes
/// the activations as packed E2M1 [M, K/2] and E8M0 [M, K/32] (i8, row-major)
/// in place of A, then the same arguments; gemm_qdqa4w4 takes them
/// dequantized (bf16 activation image, what qdq_mxfp4 writes) in place of A.
void buildGemmA4W4(mlir::ModuleOp module, const KernelSpec &spec);

/// quant_mxfp4: arguments A (bf16 [M, K]), codes (i8 [M, K/2]), scales
/// (i8 [M, K/32]), M (i32); grid x = K / BK, y = ceil(M / BM). qdq_mxfp4:
/// A, A' (the dequantized values in the activation image,
/// Kernels/Sm90Pipeline.h), M.
void buildQuantizeMx(mlir::ModuleOp module, const KernelSpec &spec);

/// The tile program of any spec (dispatches on spec.op).
void buildKernel(mlir::ModuleOp module, const KernelSpec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_GEMMA4W4_H
