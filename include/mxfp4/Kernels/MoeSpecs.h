//===- MoeSpecs.h - The kernels of a MoE layer --------------------*- C++ -*-===//
//
// The specs of the kernels a two-stage MoE launches (Ops/FusedMoe.h), in one
// place for the library, mxfp4-dump and mxfp4-jit-compile's presets:
//   stage 1: moe_quant (K = H), then moe_gemm (N = 2 Ip, K = Hp) with the
//            fused activation epilogue (eactmx: the activation quantized
//            to MXFP4 in the GEMM), or on request (fuseActivation false)
//            moe_gemm storing bf16 and moe_actq (K = inter, the activation);
//   stage 2: moe_gemm (N = Hp, K = Ip), moe_reduce (N = H, K = topk); or,
//            atomic, moe_gemm with the scatter epilogue (escatter:
//            weighted rows added to an f32 [T, Hp] accumulator) and
//            moe_cast (N = H);
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
  /// The tokens of the call (moe_gemm's K split depends on them); 0 for
  /// unknown: no split.
  int64_t tokens = 0;
  /// Whether every weight scale is below 128 (PreparedWeight::scalesBelow128;
  /// real weights are): moe_gemm folds them where it dequantizes.
  bool scalesBelow128 = true;
  /// Stage 1's activation in moe_gemm's epilogue where the target has it
  /// (moeStage1Fused); false: always moe_actq.
  bool fuseActivation = true;
  /// Stage 2 adds its rows atomically (moeStage2AtomicSpec) where the
  /// target has it; false: per-slot rows and moe_reduce.
  bool atomicStage2 = false;
};

/// The MoE scale layout (KernelSpec::moeScaleRep) of the intermediates
/// for row blocks of `blockM` on `arch`: on gfx1250 the sorted-row layout
/// its WMMA reads, quant_wmma_rep = block_m / 16 (each wave of moe_gemm
/// takes all BM rows); row-major (1) elsewhere.
int64_t moeScaleRep(Arch arch, int64_t blockM);

/// Stage 1's moe_gemm with the fused activation epilogue (eactmx, or
/// eactmxdbg with `debug`) for `s` on `arch`, or the reason it does not
/// apply there (the caller falls back to moe_gemm + moe_actq).
Expected<KernelSpec> makeMoeStage1FusedSpec(Arch arch, const MoeKernelShape &s, bool debug = false);

/// Stage 2's moe_gemm with the scatter epilogue (escatter) for `s` on
/// `arch`, or the reason it does not apply there (the caller falls back to
/// moe_gemm + moe_reduce).
Expected<KernelSpec> makeMoeStage2AtomicSpec(Arch arch, const MoeKernelShape &s);

/// The row blocks of block_m rows a routing of `tokens` x `topk` over
/// `experts` fills when it spreads evenly (the active experts, each with
/// its share of the rows rounded up to blocks).
int64_t moeExpectedBlocks(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM);

/// moe_gemm for N, K per expert with M tile `blockM` (the sorting's) and
/// the MoE scale layout moeScaleRep(arch, blockM); BK
/// 128 where two BM x BK buffers of 256 would not fit. `blocks`: the row
/// blocks expected to hold rows (moeExpectedBlocks; 0 for unknown): where
/// they and the N tiles give fewer workgroups than the target wants
/// (TargetInfo::moeSplitKWorkgroups), K is split, each split at least two
/// K steps, at most 8. `scalesBelow128`: the weights' scales fold into one
/// multiply on targets that dequantize to BF16 (sm_90a, Sm90Mma.cpp).
Expected<KernelSpec> makeMoeGemmSpec(Arch arch, int64_t n, int64_t k, int64_t blockM,
                                     int64_t blocks = 0, bool scalesBelow128 = false);

/// Stage 1's (stage = 1) or stage 2's (stage = 2) kernels, in launch order.
Expected<std::vector<KernelSpec>> makeMoeStageSpecs(Arch arch, int stage, const MoeKernelShape &s);

} // namespace mxfp4

#endif // MXFP4_KERNELS_MOESPECS_H
