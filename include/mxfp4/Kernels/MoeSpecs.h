//===- MoeSpecs.h - The kernels of a MoE layer --------------------*- C++ -*-===//
//
// The specs of the kernels a two-stage MoE launches (Ops/FusedMoe.h), in one
// place for the library, mxfp4-dump and mxfp4-jit-compile's presets:
//   stage 1: moe_quant (K = H), moe_gemm (N = 2 Ip, K = Hp), moe_actq
//            (K = inter, the activation);
//   stage 2: moe_gemm (N = Hp, K = Ip), moe_reduce (N = H, K = topk);
// Hp, Ip: H and inter padded (moePaddedRow). Sorting: makeMoeSortSpecs.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_MOESPECS_H
#define MXFP4_KERNELS_MOESPECS_H

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Support/Error.h"

#include <vector>

namespace mxfp4 {

/// What the MoE kernels are compiled for.
struct MoeKernelShape {
  int64_t experts = 0, topk = 0, hidden = 0, inter = 0, blockM = 0;
  Activation activation = Activation::Silu;
  ScaleRounding rounding = kDefaultScaleRounding;
};

/// moe_gemm for N, K per expert with M tile `blockM` (the sorting's); BK
/// 128 where two BM x BK buffers of 256 would not fit.
Expected<KernelSpec> makeMoeGemmSpec(Arch arch, int64_t n, int64_t k, int64_t blockM);

/// Stage 1's (stage = 1) or stage 2's (stage = 2) kernels, in launch order.
Expected<std::vector<KernelSpec>> makeMoeStageSpecs(Arch arch, int stage, const MoeKernelShape &s);

} // namespace mxfp4

#endif // MXFP4_KERNELS_MOESPECS_H
