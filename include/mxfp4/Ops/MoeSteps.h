//===- MoeSteps.h - The MoE steps around the grouped GEMMs --------*- C++ -*-===//
//
// The elementwise steps of a two-stage MoE (Kernels/MoeElementwise.h), for
// engines that compose their own MoE and for mxfp4-jit's: rows are the
// sorted rows of moeSort (Ops/MoeSort.h), only those below num_valid[0]
// (read on the device) are touched, so the calls need no host
// synchronisation and can be captured in a CUDA graph. `maxRows` is the
// sorted length moeSortSizes gives (it sizes the grid). Every row of an
// intermediate is padded to Kp = moePaddedRow(K) elements (the GEMMs' K
// step, Kernels/KernelSpec.h): quantized outputs are packed E2M1 [rows,
// Kp/2] (even element in the low nibble) and E8M0 [rows, Kp/32], bit for
// bit the CPU quantizer (Format/Quantize.h) on the K real elements, zero
// codes with scale 0x7F on the padding.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_MOESTEPS_H
#define MXFP4_OPS_MOESTEPS_H

#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <optional>

namespace mxfp4 {

/// Stage 1's input: sorted row r is row `sortedIds[r] & 0xFFFFFF` of
/// `hidden` ([tokens, hiddenSize] bf16) quantized with `rounding`; padding
/// rows (token >= tokens) get zero codes and scale 0x7F (1.0). The scales
/// are row-major, or with `scaleRep` R = 2, 4 or 8 (gfx1250) in its
/// sorted-row layout (KernelSpec::moeScaleRep; the stages use
/// moeScaleRep(arch, block_m), Kernels/MoeSpecs.h), whose tiles of 16 R
/// rows need a scale buffer of maxRows rounded up to 16 R rows.
Error moeQuantizeRows(Device &dev, void *stream, const void *hidden, int64_t tokens,
                      int64_t hiddenSize, const int32_t *sortedIds, const int32_t *numValid,
                      int64_t maxRows, void *codes, void *scales,
                      ScaleRounding rounding = kDefaultScaleRounding,
                      std::optional<Arch> arch = std::nullopt, int64_t scaleRep = 1);

/// A gated activation and its parameters: swiglu (p0 = alpha, p1 = limit;
/// GPT-OSS: 1.702, 7), situv2 (p0 = beta, p1 = linear_beta, both > 0; no
/// defaults), silu (none).
struct MoeActivation {
  Activation kind = Activation::None; ///< must be set: none is refused
  float p0 = 0.0f, p1 = 0.0f;
};
/// Checks the kind is gated and the parameters are legal (finite; swiglu's
/// limit, situv2's beta and linear_beta > 0).
Error checkMoeActivation(const MoeActivation &activation);
/// GPT-OSS's SwiGLU.
inline MoeActivation swigluGptOss() { return {Activation::Swiglu, 1.702f, 7.0f}; }

/// A per-expert bias of the sorted rows (nullable `values`): row r's expert
/// is expertIds[r / blockM] (moeSort's block experts), its bias row
/// `values` + expert x the row length the step documents.
struct MoeRowBias {
  const float *values = nullptr;
  const int32_t *expertIds = nullptr;
  int64_t blockM = 0;
};

/// Stage 1's epilogue as its own step: `gateUp` [rows, 2 Ip] bf16 (Ip =
/// moePaddedRow(inter)) as moe_gemm computes it from the prepared W1
/// (Ops/FusedMoe.h): gate and up columns paired in groups of 16, columns 16q
/// + 0..7 the gate values of intermediate columns 8q + 0..7 and columns 16q
/// + 8..15 their up values (padding past inter is zero), times the row's
/// `sortedWeights` when `doweight`, the activation in f32, quantized with `rounding` into `codes` /
/// `scales` ([rows, Ip] MXFP4). `debug` (nullable): the f32 activations [rows, inter], the values
/// quantized. `bias` (optional): [E, 2 Ip] f32 in gateUp's column order, added to gate and up
/// first. `scaleRep`: the scales' layout, as for moeQuantizeRows.
Error moeActivationQuantize(Device &dev, void *stream, const void *gateUp,
                            const float *sortedWeights, const int32_t *numValid, int64_t maxRows,
                            int64_t inter, const MoeActivation &activation, bool doweight,
                            void *codes, void *scales, float *debug = nullptr,
                            ScaleRounding rounding = kDefaultScaleRounding,
                            std::optional<Arch> arch = std::nullopt, const MoeRowBias &bias = {},
                            int64_t scaleRep = 1);

/// Stage 2's reduction: out[t] (bf16 [tokens, hiddenSize]) = the sum over
/// slots s, in slot order, of topkWeights[t, s] (1 when !useWeights: the
/// weights were applied in stage 1) times row positions[t, s] of `y` (bf16
/// [rows, hiddenSize], sorted order), in f32; slots at position -1 are
/// skipped. Rows of `y` are moePaddedRow(hiddenSize) wide. `bias` (optional): [E, hiddenSize]
/// f32, added to each slot's row (of sorted row positions[t, s]) before its weight.
Error moeReduce(Device &dev, void *stream, const void *y, const float *topkWeights,
                const int32_t *positions, int64_t tokens, int64_t topk, int64_t hiddenSize,
                bool useWeights, void *out, std::optional<Arch> arch = std::nullopt,
                const MoeRowBias &bias = {});

} // namespace mxfp4

#endif // MXFP4_OPS_MOESTEPS_H
