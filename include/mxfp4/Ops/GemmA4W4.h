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
// compile): the ones dispatch picks for M (planGemmA4W4, Ops/GemmA4W4Plan.h).
// The weights remember what the first call with an M launched, so later
// calls with that M (and rounding, without overrides) go straight to the
// launches.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_GEMMA4W4_H
#define MXFP4_OPS_GEMMA4W4_H

#include "mxfp4/Ops/GemmA4W4Overrides.h"
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
/// constraints: on sm_90a any N >= 1 and any K that is a multiple of 32
/// (the weights are padded to whole tiles with zeros, gemmWeightRows and
/// gemmWeightK in Kernels/KernelSpec.h); gfx950 and gfx1250 take N a
/// multiple of their N tile (256) and K of 128.
Expected<std::unique_ptr<PreparedWeight>>
prepareGemmA4W4Weight(Device &dev, Span<uint8_t> wFp4, Span<uint8_t> wScale, int64_t n, int64_t k,
                      std::optional<Arch> arch = std::nullopt);

struct GemmA4W4Options {
  /// The activations' E8M0 scale rounding (docs/Numerics.md).
  ScaleRounding rounding = kDefaultScaleRounding;
  /// Debug: also write the inline-quantized activations as packed E2M1
  /// [M, K/2] and E8M0 [M, K/32] (device pointers; sm_90a only).
  void *dumpCodes = nullptr;
  void *dumpScales = nullptr;
  /// Experimental, for tuning and tests: overrides of the kernels and tile
  /// dispatch picks (Ops/GemmA4W4Overrides.h). Empty: dispatch decides.
  experimental::GemmA4W4Overrides overrides;
};

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
