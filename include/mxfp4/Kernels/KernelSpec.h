//===- KernelSpec.h - What identifies a generated kernel ---------*- C++ -*-===//
//
// A KernelSpec holds everything that changes the generated code. Its
// canonical name is a cache key, a file name and a kernel symbol at once:
// only [a-z0-9_], every field present, float parameters as exact f32 bits:
//
//   gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_roundup_wgfx950mfma16_sgfx950mfma16_anone_ebf16
//   ..._aswiglu_f3fd9db23_f40e00000_ebf16          (alpha = 1.702f, limit = 7.0f)
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

#include "mxfp4/Support/Error.h"
#include <string_view>

#include <array>
#include <optional>
#include <string>

namespace mxfp4 {
namespace sm90 {
struct SharedLayout;
} // namespace sm90

/// The GPU targets.
enum class Arch : uint8_t { GFX950, GFX1250, SM90A };
std::string_view toString(Arch arch);
std::optional<Arch> parseArch(std::string_view name);

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
enum class OpKind : uint8_t { GemmA4W4, GemmMxA4W4, QuantizeMx, QdqMx, GemmQdqA4W4 };
std::string_view toString(OpKind op);
/// The quantizer kernels (no weights): QuantizeMx and QdqMx.
inline bool isQuantizer(OpKind op) { return op == OpKind::QuantizeMx || op == OpKind::QdqMx; }
enum class Activation : uint8_t { None, Silu, Swiglu, Situv2 };
/// BF16: store C. BF16DumpQuant: also write the inline-quantized activations
/// and their scales (tests compare them with the CPU quantizer byte for byte).
enum class Epilogue : uint8_t { BF16, BF16DumpQuant };

std::string_view toString(Activation act);
/// Float parameters of an activation: swiglu (alpha, limit), situv2 (beta, linear_beta).
unsigned activationParamCount(Activation act);

struct KernelSpec {
  OpKind op = OpKind::GemmA4W4;
  Arch arch = Arch::GFX950;
  int64_t n = 0, k = 0;
  int64_t bm = 16, bn = 256, bk = 256;
  /// Split-K: workgroups per output tile, each over K / splitK (sm_90a).
  int64_t splitK = 1;
  ScaleRounding rounding = kDefaultScaleRounding;
  WeightLayout weightLayout = WeightLayout::Gfx950Mfma16;
  ScaleLayout scaleLayout = ScaleLayout::Gfx950Mfma16;
  Activation activation = Activation::None;
  std::array<float, 2> activationParams = {0.0f, 0.0f};
  Epilogue epilogue = Epilogue::BF16;
  /// sm_90a GEMMs: every weight scale is below 128 (known when the weights
  /// are prepared; real checkpoints), so one multiply dequantizes a weight
  /// pair instead of two. Named by a trailing "_fold".
  bool foldedScales = false;
  /// sm_90a GEMMs: the number of TMA stages (K steps in flight), 0 for the
  /// tile's default (Kernels/Sm90Pipeline.h). Fewer stages can let two
  /// workgroups share an SM. Named by a trailing "_st<N>".
  int64_t stages = 0;
  /// sm_90a GEMMs on the activation image (gemm_qdqa4w4) below BM 128: two
  /// warpgroups instead of one, each warp converting 16 weight rows instead
  /// of 32 (as BM 128 does). Named by a trailing "_wg2".
  bool twoWarpgroups = false;
  /// sm_90a gemm_qdqa4w4 without split-K: a persistent grid, one or two
  /// workgroups per SM, each looping over output tiles; its TMA stages
  /// receive the next tile's first K steps while it finishes one, so no
  /// tile waits for its first copies. Named by a trailing "_ps".
  bool persistent = false;
  /// sm_90a gemm_a4w4 (inline quantization) below BM 128, for decode: each
  /// warp reads its weights straight from global memory into registers,
  /// K steps ahead, and the workgroup quantizes the activations of all its
  /// K steps into shared memory first, so the K loop has no barrier, no
  /// copies and no quantization. Named by a trailing "_dec".
  bool decode = false;
  /// The decode variant with G > 1 warpgroups per workgroup, which split
  /// the workgroup's K steps among themselves (each quantizes and runs its
  /// own, as a workgroup of one would) and sum their partial tiles in
  /// shared memory in warpgroup order: one epilogue (and one split-K
  /// arrival) per G. Bit for bit the same tile at G x the split-K with one
  /// warpgroup, when split-K is 1. Named by a trailing "_dec<G>".
  int64_t decodeGroups = 1;
  /// sm_90a gemm_qdqa4w4 without split-K, BM 128 or 256: stream-K. One
  /// workgroup per SM; the waves of whole tiles that fill the SMs go one
  /// tile per workgroup, the tiles left over are split evenly by their
  /// (tile, K step) iterations, so a tile's K steps may be split between
  /// consecutive workgroups; partial tiles are summed in K order through an
  /// f32 workspace by the last of them to finish. No wave is left part
  /// empty. Named by a trailing "_sk".
  bool streamK = false;
  /// sm_90a gemm_a4w4 at BM 8 (decode, M <= 8), BN 16 or 32: W warps per
  /// workgroup split the K loop among themselves, each streaming its
  /// weights from global memory into registers and quantizing its own
  /// tokens' blocks there, with per-warp mma.sync m16n8k16 (no warpgroup
  /// waits, no shared memory in the loop); the partial tiles meet in shared
  /// memory, summed in warp order. No split-K. 0: not this variant. Named
  /// by a trailing "_wk<W>".
  int64_t warpSplitK = 0;
  /// The streamed activation image (sm_90a, Ops/GemmA4W4.cpp): qdq_mxfp4
  /// and the gemm_qdqa4w4 after it run at the same time, the GEMM copying
  /// each (128-row block, 128-K chunk) of the image once the quantizer's
  /// workgroups have written it and counted themselves in a flag per piece
  /// (the kernels' argument after M). qdq_mxfp4: S >= 1, a grid of
  /// workgroups looping over BM x 128 pieces in the order the GEMM's S
  /// splits read them (one K step of every split, then the next). The
  /// GEMM: the quantizer's BM (8, 16 or 32), which says how many pieces
  /// make a block. 0: not streamed. Named by a trailing "_is<N>".
  int64_t imageStream = 0;

  /// The canonical name (see the file comment).
  std::string name() const;
  bool operator==(const KernelSpec &o) const { return name() == o.name(); }
};

/// Stream-K (KernelSpec::streamK): the (output tile, K step) iterations of
/// M rows, which its workgroups divide evenly, and the bytes of the f32
/// workspace of `workgroups` of them (two partial tiles each).
int64_t streamKIterations(const KernelSpec &spec, int64_t m);
int64_t streamKWorkspaceBytes(const KernelSpec &spec, int64_t workgroups);

/// The K steps of one workgroup of an sm_90a GEMM (one split's).
int64_t sm90StepsPerWorkgroup(const KernelSpec &spec);
/// The threads of one workgroup of an sm_90a GEMM.
int64_t sm90WorkgroupThreads(const KernelSpec &spec);
/// The shared memory of an sm_90a GEMM workgroup (Kernels/Sm90Pipeline.h).
sm90::SharedLayout sm90SharedLayout(const KernelSpec &spec);

/// Parses a canonical name back into a spec and verifies it.
Expected<KernelSpec> parseKernelName(std::string_view name);

/// Checks the spec's constraints for its target (tile shapes, divisibility,
/// layouts, activation parameters). Errors name the violated constraint.
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

} // namespace mxfp4

#endif // MXFP4_KERNELS_KERNELSPEC_H
