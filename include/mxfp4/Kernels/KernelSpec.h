//===- KernelSpec.h - What identifies a generated kernel ---------*- C++ -*-===//
//
// A KernelSpec holds everything that changes the generated code. Its
// canonical name is a cache key, a file name and a kernel symbol at once:
// only [a-z0-9_], every field present, float parameters as exact f32 bits:
//
//   gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_roundup_wgfx950mfma16_sgfx950mfma16_anone_ebf16
//   ..._aswiglu_f3fd9db23_f40e00000_ebf16          (alpha = 1.702f, limit = 7.0f)
//   moe_gemm_gfx1250_..._eactmx_xr4                (MoE scales with quant_wmma_rep 4)
//
// parseKernelName() inverts name() exactly and treats its input as
// untrusted (names come from CSVs, caches, command lines): any malformed name
// is an error that says what is wrong, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_KERNELSPEC_H
#define MXFP4_KERNELS_KERNELSPEC_H

#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Format/Layout.h"
#include "mxfp4/Kernels/Schedule.h"
#include "mxfp4/Kernels/TargetInfo.h"

#include "mxfp4/Support/Error.h"
#include <string_view>

#include <array>
#include <optional>
#include <string>

namespace mxfp4 {

/// GemmA4W4: C = act(quantize(A bf16) * W^T), the activations quantized
///   inline ("gemm_a4w4").
/// GemmMxA4W4: the same GEMM with the activations already MXFP4: packed E2M1
///   [M, K/2] and E8M0 [M, K/32], row-major ("gemm_mxa4w4"; sm_90a).
/// QuantizeMx: A [M, K] bf16 -> packed E2M1 [M, K/2] + E8M0 [M, K/32],
///   row-major, bit for bit the CPU quantizer ("quant_mxfp4"; sm_90a). It
///   has no weights: N is 0, BN 128, the layouts row-major.
/// QdqMx: the same quantizer writing the dequantized values (exactly
///   MXFP4, bf16) in the wgmma activation image instead of codes and scales
///   ("qdq_mxfp4"; sm_90a; Kernels/Sm90Pipeline.h).
/// GemmQdqA4W4: the GEMM on that image ("gemm_qdqa4w4"; sm_90a): its stages
///   receive the activations by bulk copies, its K loop converts weights only.
/// MoeCount, MoePlace: MoE sorting (Kernels/MoeSort.h; "moe_count",
///   "moe_place"): N = E experts, K = topk, BM = block_m, BN = 256 threads,
///   BK = 16 ids per thread and pass; SIMT kernels on every target.
/// MoeQuant, MoeActQuant, MoeReduce: the MoE elementwise kernels
///   (Kernels/MoeElementwise.h; "moe_quant", "moe_actq", "moe_reduce"):
///   gathered quantization of K = H, activation + quantization of K =
///   inter (the spec's activation, its parameters run-time), the top-k
///   weighted sum of N = H columns over K = topk slots; BN = 256 threads,
///   BM 1, BK 32; SIMT kernels on every target. MoeCast ("moe_cast"): the
///   atomic stage 2's f32 accumulator of N = H columns to bf16 (K 0).
/// MoeGemm: the MoE stages' grouped GEMM ("moe_gemm"): C[r] =
///   A[r] * W[expert(r)]^T over the sorted rows r of moe_place, A already
///   MXFP4 like GemmMxA4W4, the weights of every expert one [E * N, K]
///   prepared matrix; each BM row block reads its expert and the valid row
///   count on the device (mxtile.group_block). N, K per expert.
enum class OpKind : uint8_t {
  GemmA4W4,
  GemmMxA4W4,
  QuantizeMx,
  QdqMx,
  GemmQdqA4W4,
  MoeCount,
  MoePlace,
  MoeQuant,
  MoeActQuant,
  MoeReduce,
  MoeGemm,
  MoeCast
};
std::string_view toString(OpKind op);
/// Every op, in order.
inline constexpr OpKind kAllOpKinds[] = {
    OpKind::GemmA4W4,    OpKind::GemmMxA4W4, OpKind::QuantizeMx, OpKind::QdqMx,
    OpKind::GemmQdqA4W4, OpKind::MoeCount,   OpKind::MoePlace,   OpKind::MoeQuant,
    OpKind::MoeActQuant, OpKind::MoeReduce,  OpKind::MoeGemm,    OpKind::MoeCast};
/// The quantizer kernels (no weights): QuantizeMx and QdqMx.
inline bool isQuantizer(OpKind op) { return op == OpKind::QuantizeMx || op == OpKind::QdqMx; }
/// The SIMT kernels (no tiles, outlined as they are): the MoE sorting and
/// elementwise kernels.
inline bool isSimt(OpKind op) {
  return op == OpKind::MoeCount || op == OpKind::MoePlace || op == OpKind::MoeQuant ||
         op == OpKind::MoeActQuant || op == OpKind::MoeReduce || op == OpKind::MoeCast;
}
/// The experts one moe_count workgroup counts (Kernels/MoeSort.h).
inline constexpr int64_t kMoeCountGroup = 8;
/// The MoE intermediates (quantized rows, stage outputs) and the stacked
/// expert weights pad every row to a multiple of the target's moeRowAlign,
/// at least kMoeMinRow elements (two sm_90a K steps), so that any hidden
/// and inter size that is a multiple of 32 runs: the padding is zero codes
/// (scale 1.0) on the A side and zero weights (Ops/FusedMoe.h),
/// contributing exact zeros.
inline constexpr int64_t kMoeMinRow = 256;
inline int64_t moePaddedRow(Arch arch, int64_t elements) {
  const int64_t align = targetInfo(arch).moeRowAlign;
  const int64_t padded = (elements + align - 1) / align * align;
  return padded < kMoeMinRow ? kMoeMinRow : padded;
}
/// The dense GEMMs' weights as their kernels read them (and
/// prepareGemmA4W4Weight lays them out): N rows and K columns rounded up to
/// whole tiles with zero weights, which contribute exact zeros, so that any
/// N >= 1 and any K that is a multiple of 32 runs; the kernels read the
/// activation columns past K as zeros and store no output column past N.
/// N to a multiple of the target's N tile (TargetInfo::defaultBn: 256 on
/// AMD, 128 on sm_90a), K to one of 128 (an MMA K step) and at least
/// TargetInfo::minGemmK.
int64_t gemmWeightRows(Arch arch, int64_t n);
int64_t gemmWeightK(Arch arch, int64_t k);
enum class Activation : uint8_t { None, Silu, Swiglu, Situv2 };
/// BF16: store C. BF16DumpQuant: also write the inline-quantized activations
/// and their scales (tests compare them with the CPU quantizer byte for byte).
/// ActMx (moe_gemm of MoE stage 1): C's gate/up columns paired
/// (mxtile.store_act_mx), the gated activation (run-time parameters)
/// stored quantized to MXFP4 instead of C; ActMxDebug also writes the f32
/// activations it quantized.
/// Scatter (moe_gemm of MoE stage 2, mxtile.store_scatter_add):
/// each sorted row of C, times its routing weight (or 1), added atomically
/// to its token's row of an f32 [T, N] accumulator.
enum class Epilogue : uint8_t { BF16, BF16DumpQuant, ActMx, ActMxDebug, Scatter };
inline bool storesActMx(Epilogue e) { return e == Epilogue::ActMx || e == Epilogue::ActMxDebug; }
std::string_view toString(Epilogue e);

std::string_view toString(Activation act);
/// Float parameters of an activation: swiglu (alpha, limit), situv2 (beta, linear_beta).
unsigned activationParamCount(Activation act);

/// A kernel: its problem (what it computes) and its Schedule (how; the
/// base, so `spec.bm` is the schedule's BM). Everything that changes the
/// generated code is here.
struct KernelSpec : Schedule {
  OpKind op = OpKind::GemmA4W4;
  Arch arch = Arch::GFX950;
  int64_t n = 0, k = 0;
  ScaleRounding rounding = kDefaultScaleRounding;
  WeightLayout weightLayout = WeightLayout::Gfx950Mfma16;
  ScaleLayout scaleLayout = ScaleLayout::Gfx950Mfma16;
  Activation activation = Activation::None;
  std::array<float, 2> activationParams = {0.0f, 0.0f};
  Epilogue epilogue = Epilogue::BF16;
  /// The layout of the E8M0 scales of the MoE intermediates (the sorted
  /// MXFP4 rows moe_quant, moe_actq and moe_gemm's eactmx write and
  /// moe_gemm reads): 1, row-major [rows, Kp/32]; 2, 4 or 8 (gfx1250),
  /// the sorted-row layout its WMMA reads with quant_wmma_rep R (seed 002;
  /// Format/Layout.h gfx1250MoeScaleOffset), rows in tiles of 16 R. In the
  /// name after the epilogue when not 1 ("_xr4").
  int64_t moeScaleRep = 1;

  const Schedule &schedule() const { return *this; }
  Schedule &schedule() { return *this; }

  /// The canonical name (see the file comment).
  std::string name() const;
  bool operator==(const KernelSpec &o) const { return name() == o.name(); }
};

/// Parses a canonical name back into a spec and verifies it.
Expected<KernelSpec> parseKernelName(std::string_view name);

/// The one place that decides whether a spec is legal: its schedule's
/// fields (verifyScheduleFields), then the problem and schedule on the
/// spec's target (tile shapes, divisibility, layouts, the variants and how
/// they combine, shared memory). Errors name the violated constraint. The
/// lowerings verify the spec they read back from a kernel's IR with it.
Error verifyKernelSpec(const KernelSpec &spec);

/// The dense A4W4 GEMM for (n, k, bm) on `arch` with the derived tile (BN 256,
/// BK 256 when K % 256 == 0 else 128; sm_90a: BN 128, BK 128) and the arch's
/// layouts; verified. `op` is GemmA4W4, GemmMxA4W4 or GemmQdqA4W4.
Expected<KernelSpec> makeGemmA4W4Spec(Arch arch, int64_t n, int64_t k, int64_t bm,
                                      ScaleRounding rounding = kDefaultScaleRounding,
                                      Activation activation = Activation::None,
                                      std::array<float, 2> params = {0.0f, 0.0f},
                                      OpKind op = OpKind::GemmA4W4);

/// The MXFP4 quantizer kernel for rows of K elements, BM rows per workgroup;
/// verified. `op` is QuantizeMx or QdqMx.
Expected<KernelSpec> makeQuantizeMxSpec(Arch arch, int64_t k, int64_t bm,
                                        ScaleRounding rounding = kDefaultScaleRounding,
                                        OpKind op = OpKind::QuantizeMx);

/// The MoE elementwise kernels on `arch` (verified): moe_quant for rows of
/// K = `hidden` with `rounding`; moe_actq for rows of K = `inter` with the
/// gated `activation` (its parameters are run-time arguments), both
/// writing scales in the layout of `scaleRep` (KernelSpec::moeScaleRep);
/// moe_reduce for `hidden` columns and `topk` slots.
Expected<KernelSpec> makeMoeQuantSpec(Arch arch, int64_t hidden, ScaleRounding rounding,
                                      int64_t scaleRep = 1);
Expected<KernelSpec> makeMoeActQuantSpec(Arch arch, int64_t inter, Activation activation,
                                         ScaleRounding rounding, int64_t scaleRep = 1);
Expected<KernelSpec> makeMoeReduceSpec(Arch arch, int64_t hidden, int64_t topk);
/// moe_cast: stage 2's f32 accumulator (the scatter epilogue's) rounded to
/// the bf16 output, `hidden` columns.
Expected<KernelSpec> makeMoeCastSpec(Arch arch, int64_t hidden);

/// The two sorting kernels (moe_count, moe_place) for E experts, topk and
/// block_m on `arch`; verified.
Expected<std::array<KernelSpec, 2>> makeMoeSortSpecs(Arch arch, int64_t experts, int64_t topk,
                                                     int64_t blockM);

} // namespace mxfp4

#endif // MXFP4_KERNELS_KERNELSPEC_H
