//===- MoeReference.h - The float64 reference of a MoE layer -----*- C++ -*-===//
//
// What fusedMoeA4W4 computes, in float64 on the CPU: per routed slot,
// the gate/up GEMM on the (QDQ) hidden row, the gated activation
// (semantics.md 7), its quantization, the down GEMM and the weighted sum.
// The GPU tests and mxfp4-tune check kernels against it. Also the MoE
// layers of the models the presets, the benchmark and the tuner use.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_MOEREFERENCE_H
#define MXFP4_OPS_MOEREFERENCE_H

#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Support/Span.h"

#include <vector>

namespace mxfp4 {

/// A MoE layer's shape and activation, by model (inter per rank).
struct MoeModel {
  const char *name;
  MoeShape shape;
  MoeActivation activation;
};
/// Kimi-K3 (seed 002's layer), GPT-OSS-120B, DeepSeek-R1 FP4 at TP 8.
Span<MoeModel> moeModels();

/// The gated activation of (g, u) in float64: SiLU silu(g) u; SwiGLU with
/// alpha p0 and limit p1 (g clamped above, u on both sides), times (u + 1);
/// SiTUv2 with beta p0 and linear_beta p1.
double gatedActivation(const MoeActivation &a, double g, double u);

/// Host weights in the GGUU layout prepareMoeWeights takes: packed E2M1
/// W1 [E, 2 inter, H/2] and W2 [E, H, inter/2] with their E8M0 scales;
/// optional biases W1 [E, 2 inter], W2 [E, H].
struct MoeHostWeights {
  MoeShape shape;
  Span<uint8_t> w1, s1, w2, s2;
  Span<float> b1, b2;
};

/// The layer's output rows [tokens.size(), H] for the given tokens of
/// `hidden` [*, H] (bf16) routed by `ids` / `weights` [*, topk]. With
/// `quantized`, the QDQ math the kernels compute (both activations
/// quantized with options.rounding; unfused, gate/up rounded to bf16 first
/// as moe_gemm stores them); without, bf16 activations and exact weights.
/// A nonempty `mask` [E] drops the slots of experts it zeroes.
std::vector<double> referenceMoe(const MoeHostWeights &w, Span<uint16_t> hidden, Span<int32_t> ids,
                                 Span<float> weights, const FusedMoeOptions &options,
                                 Span<int32_t> mask, bool quantized, Span<int64_t> tokens);

} // namespace mxfp4

#endif // MXFP4_OPS_MOEREFERENCE_H
