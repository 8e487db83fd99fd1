//===- GemmA4W4Overrides.h - Experimental dispatch overrides -----*- C++ -*-===//
//
// Not a stable API: the knobs of the sm_90a back end that tuning sweeps
// (mxfp4-bench) and tests force, in GemmA4W4Options::overrides. Each
// replaces one choice of the tile table (selectGemmA4W4Tile) or of
// dispatch (planGemmA4W4); what they force is verified like any spec, and
// a combination no kernel runs is an error that says why. Fields follow
// the schedule (Kernels/Schedule.h) and will become an explicit schedule
// once the tuner writes them.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_GEMMA4W4OVERRIDES_H
#define MXFP4_OPS_GEMMA4W4OVERRIDES_H

#include <cstdint>
#include <optional>

namespace mxfp4::experimental {

struct GemmA4W4Overrides {
  /// Override the M tile / split-K factor the table picks.
  std::optional<int64_t> bm;
  std::optional<int64_t> splitK;
  std::optional<int64_t> bk;
  /// Override the N tile (sm_90a: 128, or 64 for twice the workgroups where
  /// N / 128 tiles leave SMs idle (BM <= 128, one warpgroup), or 192 on the
  /// activation image at BM 128, one tile per workgroup).
  std::optional<int64_t> bn;
  /// Override the sm_90a TMA stage count (0: the tile's default). Unforced,
  /// the table's count is dropped when BM, the activation path or the
  /// decode variant is forced to another kernel than the table's.
  std::optional<int64_t> stages;
  /// Override whether sm_90a dequantize-once GEMMs below BM 128 use two
  /// warpgroups.
  std::optional<bool> twoWarpgroups;
  /// Override whether sm_90a dequantize-once GEMMs without split-K run as a
  /// persistent grid (workgroups looping over output tiles).
  std::optional<bool> persistent;
  /// Override the row tile of qdq_mxfp4 ahead of a dequantize-once GEMM (8,
  /// 16, 32 or 64; selectQuantizeMxBm's otherwise).
  std::optional<int64_t> quantizerBm;
  /// Override whether sm_90a GEMMs that quantize inline below BM 128 run
  /// the decode variant (weights straight to registers, the activations of
  /// every K step quantized first, no barriers in the K loop).
  std::optional<bool> decode;
  /// Override the decode variant's warpgroups splitting a workgroup's K
  /// steps (1 to 4; Schedule::decodeGroups). More than one where the
  /// decode variant does not run (by the table or `decode`) is an error.
  std::optional<int64_t> decodeGroups;
  /// Override the sm_90a warp-split variant (Schedule::warpSplitK): W
  /// warps per workgroup splitting K with mma.sync, BM 8 (M <= 8 in one
  /// M tile), BN 32 unless `bn` says 16, no split-K; 0: the table's tile
  /// without it.
  std::optional<int64_t> warpSplitK;
  /// Override the streamed activation image (sm_90a dequantize-once at BM
  /// 128, one tile per workgroup, no split M): qdq_mxfp4 and the GEMM run
  /// at once, the GEMM copying each piece of the image as soon as it is
  /// written; the value is the quantizer's workgroups per SM (1..16). 0:
  /// the quantizer ends before the GEMM reads the image.
  std::optional<int64_t> imageStream;
  /// Override whether sm_90a dequantize-once GEMMs of BM 128 or 256 without
  /// split-K run stream-K (every SM an equal share of the tiles' K steps).
  std::optional<bool> streamK;
  /// Override the table's split of M on sm_90a's dequantize-once path: rows
  /// [0, splitM) with the chosen tile, the rest with the table's tile for
  /// them, in a second launch on the same activation image (0: no split;
  /// else a multiple of 256 below M). Forcing BM turns the table's split off.
  std::optional<int64_t> splitM;
  /// Override the table's choice between quantizing the activations inline
  /// in every workgroup (false) and once, in a separate quant_mxfp4 pass,
  /// before a gemm_mxa4w4 (true; sm_90a).
  std::optional<bool> preQuantize;
  /// With preQuantize: hand the GEMM the dequantized activations (bf16 in
  /// the wgmma operand image, qdq_mxfp4 + gemm_qdqa4w4: copied into shared
  /// memory by the stages, no conversion left in its K loop; the default) or
  /// their codes and scales (quant_mxfp4 + gemm_mxa4w4; also what a
  /// quantization dump uses).
  std::optional<bool> dequantizeOnce;
  /// Override whether sm_90a kernels fold the weight scales (one multiply per
  /// dequantized pair; the default whenever every scale is below 128). Both
  /// give the same bits; true on weights with larger scales is an error.
  std::optional<bool> foldScales;
  /// Dispatch from the built-in tile table even where a tuned CSV row
  /// (Ops/TunedCsv.h) applies: what the tuner compares its candidates with.
  /// Any other override does the same.
  bool ignoreTunedCsv = false;

  /// Whether any field is set.
  bool any() const {
    return bm || splitK || bk || bn || stages || twoWarpgroups || persistent || quantizerBm ||
           decode || decodeGroups || warpSplitK || imageStream || streamK || splitM ||
           preQuantize || dequantizeOnce || foldScales || ignoreTunedCsv;
  }
};

} // namespace mxfp4::experimental

#endif // MXFP4_OPS_GEMMA4W4OVERRIDES_H
