//===- FusedMoe.h - The A4W4 mixture of experts -------------------*- C++ -*-===//
//
// A MoE layer on MXFP4 weights with BF16 activations (semantics.md 6):
//
//   out[t] = sum over slots s of w[t, s] * (W2[e] act(W1[e] q(hidden[t]) + b1[e]) + b2[e])
//
// with e = topk_ids[t, s], q the MXFP4 quantization of the activations
// (inline, any rounding), act a gated activation on W1's gate and up
// halves, its output quantized to MXFP4 again before W2, b1 and b2 the
// optional biases (MoeBiases). Six launches, no host synchronisation (a
// CUDA graph can capture them): moeSort's two (Ops/MoeSort.h), the
// gathered quantization of the hidden rows in sorted order, stage 1's
// grouped GEMM (moe_gemm) with the activation and its quantization in its
// epilogue (FusedMoeOptions::fuseActivation; a seventh kernel, moe_actq,
// where that does not apply), stage 2's grouped GEMM, and the top-k
// weighted sum into `out` in slot order (deterministic). Or, with
// MoeCombine::Atomic, stage 2's GEMM adds each weighted row to its token's
// row of an f32 accumulator (zeroed first) and moe_cast rounds that to
// `out`. The steps are also callable alone (Ops/MoeSteps.h; moeStage1,
// moeStage2 below).
//
// Any hidden and inter size that is a multiple of 32 runs: the prepared
// weights and the intermediates pad rows to moePaddedRow (a multiple of the
// target's moeRowAlign: 128 on sm_90a, 256 on gfx950 and gfx1250) with
// zeros, which contribute exact zeros.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_FUSEDMOE_H
#define MXFP4_OPS_FUSEDMOE_H

#include "mxfp4/Ops/MoeSteps.h"
#include "mxfp4/Ops/TunedCsv.h"
#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"

#include <memory>
#include <optional>

namespace mxfp4 {

/// A layer's shape: E experts, each token routed to topk of them, hidden
/// size H (W1's K, W2's N), intermediate size inter (W1 has 2 inter rows:
/// gate and up).
struct MoeShape {
  int64_t experts = 0, topk = 0, hidden = 0, inter = 0;
};
/// Checks E in [1, 65536], topk in [1, min(E, 255)], H and inter positive
/// multiples of 32.
Error checkMoeShape(const MoeShape &shape);

/// Where W1's gate and up rows are: Gguu, all gate rows then all up rows
/// ([gate(inter); up(inter)]); Gugu, 16-row tiles interleaved, gate tile i
/// then up tile i (rows 32i..32i+15 are gate rows 16i.., rows 32i+16..
/// up rows 16i..; AITER's gate_mode INTERLEAVE, semantics.md 3.1).
enum class GateUpLayout : uint8_t { Gguu, Gugu };

/// A layer's weights preshuffled and resident on one device, with the
/// scratch the MoE calls keep per stream (like PreparedWeight's: it grows on
/// demand, which cannot happen while a stream is captured). A call outside
/// capture reserves what every call with as many tokens or fewer needs, so
/// one warm-up at the largest batch on a stream lets any smaller one be
/// captured there.
class MoeWeights {
public:
  struct Impl;
  explicit MoeWeights(std::unique_ptr<Impl> impl);
  ~MoeWeights();
  MoeWeights(const MoeWeights &) = delete;
  MoeWeights &operator=(const MoeWeights &) = delete;

  const MoeShape &shape() const;
  Arch arch() const;
  const Impl &impl() const { return *pimpl; }

private:
  std::unique_ptr<Impl> pimpl;
};

/// A layer's optional biases (GPT-OSS has both), f32: W1's [E, 2 inter] in
/// the order of W1's rows (`layout`), added to stage 1's gate and up sums
/// before the routing weight (doweightStage1) and the activation; W2's [E,
/// H], added to each slot's stage-2 row before the weighted sum. Empty:
/// none.
struct MoeBiases {
  Span<float> w1, w2;
};

/// Preshuffles a layer's host weights for `arch` (default: the device's;
/// another target is an error, its layout could not run there) and
/// uploads them: W1 packed E2M1 [E, 2 inter, H/2] (even K element in the
/// low nibble) with E8M0 scales [E, 2 inter, H/32], W2 [E, H, inter/2] with
/// [E, H, inter/32], row-major; and the biases, if any. Once per layer.
Expected<std::unique_ptr<MoeWeights>> prepareMoeWeights(Device &dev, const MoeShape &shape,
                                                        Span<uint8_t> w1Fp4, Span<uint8_t> w1Scale,
                                                        Span<uint8_t> w2Fp4, Span<uint8_t> w2Scale,
                                                        GateUpLayout layout = GateUpLayout::Gguu,
                                                        std::optional<Arch> arch = std::nullopt,
                                                        const MoeBiases &biases = {});

/// How stage 2 sums a token's slots. Reduce: each slot's row is stored,
/// then summed in slot order (the result does not depend on timing).
/// Atomic: each weighted row is added to an f32 accumulator as the GEMM
/// finishes it (no per-slot rows, no second pass over them; the order of
/// the adds, and so the last bits of the sum, vary from run to run), then
/// rounded to bf16. Every target has both (MXFP4_LOG=debug says which
/// ran).
enum class MoeCombine : uint8_t { Reduce, Atomic };

struct FusedMoeOptions {
  /// The gated activation and its parameters (no hidden defaults: situv2's
  /// beta and linear_beta are the caller's).
  MoeActivation activation;
  /// The E8M0 scale rounding of both activation quantizations.
  ScaleRounding rounding = kDefaultScaleRounding;
  /// Multiply stage 1's rows by their routing weight before the activation
  /// (and sum stage 2's unweighted).
  bool doweightStage1 = false;
  /// Rows per sorted block and M tile of the grouped GEMMs: 16, 32, 64 or
  /// 128, at most the target's maxMoeBlockM (64 on AMD); 0: dispatch
  /// picks from the tokens per expert.
  int64_t blockM = 0;
  /// Expert parallelism: device pointer [globalExperts] i32, nonzero for
  /// the experts this rank holds, which must be the weights' E, in global
  /// order (null: the weights hold every expert). topk ids are global ids;
  /// slots of other experts add nothing.
  const int32_t *expertMask = nullptr;
  int64_t globalExperts = 0;
  /// Device pointer to one i32 (nullable): the number of routed ids outside
  /// [0, E), which are dropped.
  int32_t *dropped = nullptr;
  /// Stage 1's activation and its MXFP4 quantization in the GEMM's
  /// epilogue (the intermediate never exists in bf16) where W1 has no
  /// bias (every target); otherwise, or false, the GEMM stores bf16 gate/up
  /// rows and a second kernel (moe_actq) quantizes their activation. Both give
  /// the same quantizer on f32 values; the fused path's are the f32 sums,
  /// the other's their bf16 roundings. MXFP4_LOG=debug says which ran.
  bool fuseActivation = true;
  /// Stage 2's sum over the slots.
  MoeCombine combine = MoeCombine::Reduce;
};

/// out [tokens, H] bf16 = the MoE of `hidden` [tokens, H] bf16 routed by
/// `topkIds` / `topkWeights` [tokens, topk] (i32, f32), on `stream`; device
/// pointers, 4-byte aligned. `options.activation` must be set.
Error fusedMoeA4W4(Device &dev, void *stream, const void *hidden, int64_t tokens,
                   const int32_t *topkIds, const float *topkWeights, const MoeWeights &weights,
                   const FusedMoeOptions &options, void *out);

/// The block_m (and grouped GEMM M tile) fusedMoeA4W4 takes for `tokens`
/// on `arch`: options.blockM if set, else the tuned fused_moe row for the
/// layer on a device of `computeUnits` SMs (Ops/TunedCsv.h), else the one
/// that holds an active expert's rows with the least padding (at most the
/// target's largest MoE row block).
int64_t moeBlockM(Arch arch, const MoeShape &shape, int64_t tokens, const FusedMoeOptions &options,
                  int64_t computeUnits = 0);
/// The key of a layer's fused_moe rows (Ops/TunedCsv.h) on a device of
/// `computeUnits` SMs.
TunedKey moeTunedKey(Arch arch, const MoeShape &shape, Activation activation, int64_t computeUnits);
/// The heuristic alone: the block_m that holds an active expert's rows with
/// the least padding, at most the target's largest (what tuning starts from).
int64_t moeDefaultBlockM(Arch arch, const MoeShape &shape, int64_t tokens);
/// The sorted rows the stages can reach for `tokens` at `blockM`: every
/// placed entry plus each active expert's padding, at most the sorted length.
int64_t moeMaxRows(const MoeShape &shape, int64_t tokens, int64_t blockM);

/// A sorting on the device, as the stages read it (moeSort's outputs).
struct MoeSorted {
  const int32_t *sortedIds = nullptr;
  const float *sortedWeights = nullptr;
  const int32_t *expertIds = nullptr;
  const int32_t *numValid = nullptr;
  int64_t blockM = 0;
};

/// Stage 1 alone: the sorted rows of `hidden` quantized, times W1 of their
/// expert, the activation (times the routing weight first when
/// options.doweightStage1), quantized into `codes` [maxRows, Ip/2] and
/// `scales` [maxRows, Ip/32] (Ip = moePaddedRow(inter); Ops/MoeSteps.h's
/// layout: row-major; on gfx1250 that of R = moeScaleRep(arch, block_m),
/// Kernels/MoeSpecs.h, maxRows rounded up to 16 R) in sorted order.
/// `debugActivations` (nullable, [maxRows, inter] f32): the activation
/// values quantized, of the valid rows.
Error moeStage1(Device &dev, void *stream, const void *hidden, int64_t tokens,
                const MoeSorted &sorted, const MoeWeights &weights, const FusedMoeOptions &options,
                void *codes, void *scales, float *debugActivations = nullptr);

/// Stage 2 alone: those rows times W2 of their expert, then out [tokens, H]
/// bf16 = the sum over each token's slots of weight x row (weights 1 with
/// options.doweightStage1) through `positions` (moeSort's), or with
/// MoeCombine::Atomic through the sorted ids and weights.
Error moeStage2(Device &dev, void *stream, const void *codes, const void *scales, int64_t tokens,
                const MoeSorted &sorted, const int32_t *positions, const float *topkWeights,
                const MoeWeights &weights, const FusedMoeOptions &options, void *out);

} // namespace mxfp4

#endif // MXFP4_OPS_FUSEDMOE_H
