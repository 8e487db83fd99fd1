//===- GemmA4W4.h - The public dense A4W4 GEMM API ---------------*- C++ -*-===//
//
//   auto dev = mxfp4::Device::open();
//   auto w = mxfp4::prepareGemmA4W4Weight(**dev, wFp4, wScale, N, K);   // once
//   mxfp4::gemmA4W4(**dev, stream, aBf16, M, **w, outBf16);              // per call
//
// out[M, N] (bf16) = quantize_mxfp4(a[M, K] bf16) * W^T, W given as packed
// E2M1 [N, K/2] (even K in the low nibble) with E8M0 scales [N, K/32], both
// row-major on the host; prepare() preshuffles them for the device's target
// and uploads them once. Kernels come from the JIT (memory, disk cache, or a
// compile) for the tile the table below picks for M.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_GEMMA4W4_H
#define MXFP4_OPS_GEMMA4W4_H

#include "mxfp4/Runtime/Device.h"

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"

#include <memory>
#include <optional>

namespace mxfp4 {

/// Weights preshuffled and resident on one device, with the scratch the
/// GEMMs on them keep per stream (Ops/PreparedWeightImpl.h, not part of the
/// API). Calls on one stream run in order and share scratch; calls on other
/// streams, from any thread, get their own and may run at once.
class PreparedWeight {
public:
  struct Impl;
  explicit PreparedWeight(std::unique_ptr<Impl> impl);
  ~PreparedWeight();
  PreparedWeight(const PreparedWeight &) = delete;
  PreparedWeight &operator=(const PreparedWeight &) = delete;

  Arch arch() const;
  int64_t n() const;
  int64_t k() const;
  /// Every weight scale is below 128 (scale <= 1): the sm_90a GEMMs use the
  /// kernels that fold it (Schedule::foldedScales).
  bool scalesBelow128() const;
  Device &device() const;
  /// The device buffers and scratch, for the library (and its tests).
  const Impl &impl() const { return *pimpl; }

private:
  std::unique_ptr<Impl> pimpl;
};

/// Preshuffles host weights for `arch` (default: targetArch(&dev)) and
/// uploads them. Checks the sizes against N and K and the target's shape
/// constraints.
Expected<std::unique_ptr<PreparedWeight>>
prepareGemmA4W4Weight(Device &dev, Span<uint8_t> wFp4, Span<uint8_t> wScale, int64_t n, int64_t k,
                      std::optional<Arch> arch = std::nullopt);

struct GemmA4W4Options {
  ScaleRounding rounding = kDefaultScaleRounding;
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
  /// Debug: also write the inline-quantized activations as packed E2M1
  /// [M, K/2] and E8M0 [M, K/32] (device pointers; sm_90a only).
  void *dumpCodes = nullptr;
  void *dumpScales = nullptr;
};

/// A tile choice: the M tile and the split-K factor.
struct GemmA4W4Tile {
  int64_t bm = 16;
  int64_t splitK = 1;
  int64_t bk = 0;             ///< 0: the target's default
  bool preQuantize = false;   ///< quant_mxfp4 once, then gemm_mxa4w4 (sm_90a)
  int64_t stages = 0;         ///< sm_90a TMA stages; 0: the tile's default
  bool twoWarpgroups = false; ///< sm_90a gemm_qdqa4w4 below BM 128: 8 warps
  bool persistent = false;    ///< sm_90a gemm_qdqa4w4 without split-K: a persistent grid
  bool streamK = false;       ///< sm_90a gemm_qdqa4w4, BM 128/256, no split-K: stream-K
  bool decode = false;        ///< sm_90a inline quantization below BM 128: the decode variant
  /// sm_90a dequantize-once: this tile for rows [0, splitM) only (0: all),
  /// the table's tile for the rest, launched after it on the same image.
  int64_t splitM = 0;
  /// sm_90a N tile, 128, 64 or 192 (0: the target's default).
  int64_t bn = 0;
  /// The decode variant's warpgroups splitting K (Schedule::decodeGroups).
  int64_t decodeGroups = 1;
  /// sm_90a inline quantization at BM 8, BN 16 or 32: warps splitting K
  /// (Schedule::warpSplitK); 0: not this variant.
  int64_t warpSplitK = 0;
  /// sm_90a dequantize-once at BM 128: the streamed image, its quantizer's
  /// workgroups per SM (GemmA4W4Options::imageStream); 0: not streamed.
  int64_t imageStream = 0;
};

/// The tile for (arch, N, K, M): the one table later tuning replaces.
/// `warpSplit` false: the tile it picks without the sm_90a warp-split
/// variant (what forcing warpSplitK = 0 runs).
GemmA4W4Tile selectGemmA4W4Tile(Arch arch, int64_t n, int64_t k, int64_t m, bool warpSplit = true);

/// out[M, N] = quantize(a[M, K]) * W^T on `stream`. `a` and `out` are device
/// pointers to row-major bf16 (both 16-byte aligned); M >= 1.
Error gemmA4W4(Device &dev, void *stream, const void *a, int64_t m, const PreparedWeight &w,
               void *out, const GemmA4W4Options &options = {});

/// out[M, N] = A * W^T with A already MXFP4: packed E2M1 `aCodes` [M, K/2]
/// (even K in the low nibble, 4-byte aligned) and E8M0 `aScales` [M, K/32],
/// device pointers, row-major (what quantizeMxfp4 writes). sm_90a.
/// `options.rounding` and the dump do not apply.
Error gemmMxA4W4(Device &dev, void *stream, const void *aCodes, const void *aScales, int64_t m,
                 const PreparedWeight &w, void *out, const GemmA4W4Options &options = {});

} // namespace mxfp4

#endif // MXFP4_OPS_GEMMA4W4_H
