//===- KernelSpecVerifier.cpp - Whether a kernel spec is legal -----------===//
//
// verifyKernelSpec (KernelSpec.h): the one place that decides whether a
// schedule is legal for a problem on a target.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/Sm90Geometry.h"
#include "mxfp4/Support/Checked.h"

namespace mxfp4 {

/// Checks shared by every target: positive shapes, divisibility by the tile,
/// the layouts and the activation.
static Error verifyCommon(const KernelSpec &s) {
  const WeightLayout wl = targetInfo(s.arch).weightLayout;
  const ScaleLayout sl = targetInfo(s.arch).scaleLayout;
  std::string_view arch = toString(s.arch);
  auto fail = [](const auto &...parts) { return makeError(parts...); };
  if (s.n <= 0 || s.k <= 0)
    return fail("gemm_a4w4: N and K must be positive, got N = ", s.n, ", K = ", s.k);
  // The kernels address the packed weights (N x K/2 bytes) with 32 bits.
  if (!productBelow({s.n, s.k / 2}, kIndex32Limit))
    return fail("gemm_a4w4: N = ", s.n, " x K = ", s.k,
                " is too large for 32-bit indexing (N * K / 2 must be < 2^31)");
  // Any N and K % 32 run on weights padded to whole tiles (gemmWeightRows,
  // gemmWeightK).
  const int64_t rows = gemmWeightRows(s.arch, s.n), kw = gemmWeightK(s.arch, s.k);
  if (s.k % 32 != 0)
    return fail("gemm_a4w4 on ", arch,
                " needs K % 32 == 0 (an MXFP4 block is 32 elements); got K = ", s.k);
  if (rows % s.bn != 0)
    return fail("gemm_a4w4 on ", arch, " needs N % ", s.bn, " == 0 (the N tile is ", s.bn,
                "); got N = ", s.n, rows != s.n ? strCat(", padded to ", rows) : std::string());
  if ((s.bk != 128 && s.bk != 256) || kw % s.bk != 0)
    return fail("gemm_a4w4: BK must be 128 or 256 and divide K = ", kw,
                kw != s.k ? strCat(" (K = ", s.k, " padded)") : std::string(), ", got ", s.bk);
  // The tails: activation columns past K read as zeros, output columns
  // past N not stored (Conversion/TileToNVVM).
  const bool tails = rows != s.n || kw != s.k;
  if (tails && s.op != OpKind::GemmA4W4 && s.op != OpKind::GemmMxA4W4 &&
      !(s.op == OpKind::GemmQdqA4W4 && kw == s.k))
    return fail(toString(s.op), " on ", arch, " needs N % ", s.bn == 64 ? 64 : 128,
                " == 0 and K % 128 == 0, got N = ", s.n, ", K = ", s.k,
                "; gemm_a4w4 and gemm_mxa4w4 take any N and K % 32 (gemm_qdqa4w4 any N)");
  if (kw != s.k && s.epilogue == Epilogue::BF16DumpQuant)
    return fail("gemm_a4w4 on ", arch,
                ": the quantization dump (epilogue bf16dq) needs K % 128 == 0, "
                "got K = ",
                s.k);
  if (tails && s.streamK)
    return fail("stream-K (_sk) needs whole output tiles: N % ", s.bn, " == 0, got N = ", s.n);
  if (s.weightLayout != wl)
    return fail("gemm_a4w4 on ", arch, " reads weights in the ", toString(wl), " layout");
  if (s.scaleLayout != sl)
    return fail("gemm_a4w4 on ", arch, " reads weight scales in the ", toString(sl), " layout");
  if ((s.activation == Activation::Swiglu || s.activation == Activation::Situv2) &&
      !storesActMx(s.epilogue))
    return fail("activation ", toString(s.activation),
                " needs gate and up tiles (MoE stage 1); the dense GEMM takes none or silu");
  return Error::success();
}

/// The quantizer kernels: no weights, one K step per workgroup.
static Error verifyQuantizeMx(const KernelSpec &s) {
  auto fail = [&](const auto &...parts) { return makeError(toString(s.op), ": ", parts...); };
  if (s.arch != Arch::SM90A)
    return fail("implemented for sm_90a only, got ", toString(s.arch));
  if (s.n != 0 || s.bn != 128 || s.splitK != 1)
    return fail("has no weights: N must be 0, BN 128 and split-K 1, got N = ", s.n, ", BN = ", s.bn,
                ", split-K ", s.splitK);
  if (s.k <= 0 || (s.bk != 128 && s.bk != 256) || s.k % s.bk != 0)
    return fail("BK must be 128 or 256 and divide K = ", s.k, ", got ", s.bk);
  if (s.bm != 8 && s.bm != 16 && s.bm != 32 && s.bm != 64)
    return fail("BM must be 8, 16, 32 or 64, got ", s.bm);
  if (s.weightLayout != WeightLayout::RowMajor || s.scaleLayout != ScaleLayout::RowMajor)
    return fail("writes codes and scales row-major; the layouts must be rowmajor");
  if (s.activation != Activation::None || s.epilogue != Epilogue::BF16)
    return fail("takes no activation and no epilogue");
  if (s.foldedScales)
    return fail("has no weight scales to fold");
  if (s.stages != 0)
    return fail("has no K pipeline: the stage count must be 0, got ", s.stages);
  if (s.twoWarpgroups)
    return fail("has no MMA warpgroups: '_wg2' does not apply");
  if (s.decode)
    return fail("has no K loop: '_dec' does not apply");
  if (s.warpSplitK)
    return fail("has no K loop: '_wk' does not apply");
  if (s.persistent || s.streamK)
    return fail("has no tile loop: '", s.persistent ? "_ps" : "_sk", "' does not apply");
  if (s.imageStream < 0)
    return fail("the streamed image (_is<S>) takes S >= 1 splits, got ", s.imageStream);
  // Streamed pieces are BM x 128 and stored directly (BM 64 stages its
  // block for bulk copies, whose completion is no release).
  if (s.imageStream &&
      (s.op != OpKind::QdqMx || s.bk != 128 || s.bm > 32 || (s.k / 128) % s.imageStream != 0))
    return fail("the streamed image (_is<S>) is a variant of qdq_mxfp4 with BM 8, 16 or 32 and "
                "BK 128 whose K steps (K / 128 = ",
                s.k / 128, ") the S splits divide; got ", toString(s.op), " with BM ", s.bm,
                ", BK ", s.bk, ", S = ", s.imageStream);
  return Error::success();
}

/// The SIMT kernels (MoE sorting and elementwise), every target.
static Error verifySimt(const KernelSpec &s) {
  auto fail = [&](const auto &...parts) { return makeError(toString(s.op), ": ", parts...); };
  if (s.splitK != 1 || s.foldedScales || s.stages || s.twoWarpgroups || s.decode ||
      s.decodeGroups != 1 || s.warpSplitK || s.imageStream || s.persistent || s.streamK)
    return fail("is a SIMT kernel: no GEMM variant applies");
  if (s.weightLayout != WeightLayout::RowMajor || s.scaleLayout != ScaleLayout::RowMajor ||
      s.epilogue != Epilogue::BF16 || s.activationParams[0] != 0.0f ||
      s.activationParams[1] != 0.0f)
    return fail("has no weights, epilogue or compiled-in activation parameters: the layouts "
                "must be rowmajor, the epilogue bf16, the parameters 0");
  const bool quantizes = s.op == OpKind::MoeQuant || s.op == OpKind::MoeActQuant;
  if (!quantizes && s.rounding != kDefaultScaleRounding)
    return fail("does not quantize: the rounding must be the default, ",
                toString(kDefaultScaleRounding));
  if ((s.op == OpKind::MoeActQuant) !=
      (s.activation == Activation::Silu || s.activation == Activation::Swiglu ||
       s.activation == Activation::Situv2))
    return fail(s.op == OpKind::MoeActQuant ? "needs a gated activation: silu, swiglu or situv2"
                                            : "takes no activation");
  if (s.bn != 256)
    return fail("runs 256 threads a workgroup (BN 256), got BN ", s.bn);
  if (s.op == OpKind::MoeCount || s.op == OpKind::MoePlace) {
    if (s.n < 1 || s.n > 65536)
      return fail("N is the number of experts, 1 to 65536, got ", s.n);
    if (s.k < 1 || s.k > 255)
      return fail("K is topk, 1 to 255, got ", s.k);
    if (s.bm < 1 || s.bm > 256)
      return fail("BM is block_m, 1 to 256, got ", s.bm);
    if (s.bk != 16)
      return fail("reads 16 ids a thread and pass (BK 16), got BK ", s.bk);
    return Error::success();
  }
  if (s.bm != 1 || s.bk != 32)
    return fail("takes one 32-element block a thread (BM 1, BK 32), got BM ", s.bm, ", BK ", s.bk);
  if (s.op == OpKind::MoeReduce || s.op == OpKind::MoeCast) {
    if (s.n < 8 || s.n % 8 != 0)
      return fail("N is the hidden size, a multiple of 8, got ", s.n);
    if (s.op == OpKind::MoeCast && s.k != 0)
      return fail("sums nothing: K must be 0, got ", s.k);
    if (s.op == OpKind::MoeReduce && (s.k < 1 || s.k > 255))
      return fail("K is topk, 1 to 255, got ", s.k);
    return Error::success();
  }
  if (s.n != 0)
    return fail("has no weights: N must be 0, got ", s.n);
  if (s.k < 32 || s.k % 32 != 0)
    return fail("K (the row length) must be a positive multiple of 32, got ", s.k);
  return Error::success();
}

/// The MoE scale layout (KernelSpec::moeScaleRep): row-major on every
/// target; gfx1250's sorted-row layout on the kernels that write or read
/// the MoE intermediates there.
static Error verifyMoeScaleRep(const KernelSpec &s) {
  const int64_t rep = s.moeScaleRep;
  if (rep == 1)
    return Error::success();
  if (!isGfx1250MoeScaleRep(rep))
    return makeError("the MoE scale layout (_xr<R>) takes quant_wmma_rep R = 2, 4 or 8 (row-major "
                     "is no field), got ",
                     rep);
  if (s.arch != Arch::GFX1250 ||
      (s.op != OpKind::MoeQuant && s.op != OpKind::MoeActQuant && s.op != OpKind::MoeGemm))
    return makeError("the MoE scale layout (_xr<R>) is gfx1250's, for moe_quant, moe_actq and "
                     "moe_gemm; got ",
                     toString(s.op), " on ", toString(s.arch));
  if (s.op == OpKind::MoeGemm && s.bm % (16 * rep) != 0)
    return makeError("moe_gemm's row blocks (BM = block_m) must be whole tiles of 16 R = ",
                     16 * rep, " rows of the MoE scale layout (_xr", rep, "); got BM ", s.bm);
  return Error::success();
}

/// Every enum field holds one of its values (a spec built from a cast
/// integer would otherwise compile a kernel named "..._invalid_...").
static Error verifyEnums(const KernelSpec &s) {
  auto bad = [](std::string_view field, int value) {
    return makeError("kernel spec: ", field, " ", value, " is out of range");
  };
  if (static_cast<size_t>(s.arch) > static_cast<size_t>(Arch::SM90A))
    return bad("arch", static_cast<int>(s.arch));
  if (static_cast<size_t>(s.op) >= std::size(kAllOpKinds))
    return bad("op", static_cast<int>(s.op));
  if (static_cast<size_t>(s.rounding) >= allScaleRoundings().size())
    return bad("scale rounding", static_cast<int>(s.rounding));
  if (static_cast<size_t>(s.activation) > static_cast<size_t>(Activation::Situv2))
    return bad("activation", static_cast<int>(s.activation));
  if (static_cast<size_t>(s.epilogue) > static_cast<size_t>(Epilogue::Scatter))
    return bad("epilogue", static_cast<int>(s.epilogue));
  return Error::success();
}

Error verifyKernelSpec(const KernelSpec &s) {
  if (Error e = verifyEnums(s))
    return e;
  std::string_view arch = toString(s.arch);
  auto fail = [](const auto &...parts) { return makeError(parts...); };
  if (Error e = verifyScheduleFields(s))
    return e;
  if (Error e = verifyMoeScaleRep(s))
    return e;
  if (isQuantizer(s.op))
    return verifyQuantizeMx(s);
  if (isSimt(s.op))
    return verifySimt(s);
  if (s.foldedScales && s.arch != Arch::SM90A)
    return fail("folded weight scales (_fold) are an sm_90a GEMM variant, not ", arch);
  if (s.stages != 0 && s.arch != Arch::SM90A)
    return fail("a stage count (_st<N>) is an sm_90a GEMM variant, not ", arch);
  if (s.twoWarpgroups && (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.bm == 128))
    return fail("two warpgroups (_wg2) are a variant of the sm_90a gemm_qdqa4w4 below BM 128 "
                "(BM 128 always has two), not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm);
  if (s.persistent && (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.splitK != 1))
    return fail("a persistent grid (_ps) is a variant of the sm_90a gemm_qdqa4w4 without "
                "split-K, not of ",
                toString(s.op), " on ", arch, " with split-K ", s.splitK);
  if (s.decode && (s.arch != Arch::SM90A || s.op != OpKind::GemmA4W4 || s.bm >= 128 ||
                   s.stages != 0 || s.epilogue != Epilogue::BF16))
    return fail("the decode variant (_dec) is one of the sm_90a gemm_a4w4 (inline quantization) "
                "below BM 128, without a stage count or a quantization dump, not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm);
  if (s.decode && s.bk > 0 && gemmWeightK(s.arch, s.k) % (s.bk * s.splitK) != 0)
    return fail("the decode variant (_dec) gives every split the same K steps: K = ",
                gemmWeightK(s.arch, s.k),
                " must be a multiple of BK x split-K = ", s.bk * s.splitK);
  if (s.warpSplitK &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmA4W4 || s.bm != 8 || s.bk != 128 ||
       (s.bn != 16 && s.bn != 32) || s.splitK != 1 || s.decode || s.stages != 0 ||
       s.epilogue != Epilogue::BF16 || s.activation != Activation::None))
    return fail("the warp-split variant (_wk<W>) is one of the sm_90a gemm_a4w4 (inline "
                "quantization) at BM 8, BN 16 or 32, BK 128, without split-K, the decode "
                "variant, a stage count, an activation or a quantization dump; got ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", BN ", s.bn, ", BK ", s.bk,
                ", split-K ", s.splitK);
  if (s.warpSplitK && (s.warpSplitK < 1 || s.warpSplitK > sm90::kMaxSplitKWarps ||
                       (s.k > 0 && gemmWeightK(s.arch, s.k) / 128 < s.warpSplitK)))
    return fail("the warp-split variant takes 1 to ", sm90::kMaxSplitKWarps,
                " warps, each at least one 128-K chunk: K = ", s.k, " has ",
                gemmWeightK(s.arch, s.k) / 128, " chunks, got ", s.warpSplitK, " warps");
  if (s.decodeGroups > sm90::kMaxDecodeGroups)
    return fail("the decode variant takes 1 to ", sm90::kMaxDecodeGroups,
                " warpgroups splitting K (_dec<G>), got ", s.decodeGroups);
  const int64_t splitSteps = s.bk > 0 ? sm90StepsPerWorkgroup(s) : 0;
  if (s.decode && s.bk > 0 && s.decodeGroups > 1 &&
      (splitSteps % s.decodeGroups != 0 || splitSteps < 2 * s.decodeGroups))
    return fail("the decode variant's ", s.decodeGroups,
                " warpgroups take equal K steps, at least two each: the ", splitSteps,
                " steps of a split must be a multiple of ", s.decodeGroups, " and at least ",
                2 * s.decodeGroups);
  if (s.streamK &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.splitK != 1 || s.persistent ||
       (s.bm != 128 && s.bm != 256) || s.bn != 128 || s.activation != Activation::None))
    return fail("stream-K (_sk) is a variant of the sm_90a gemm_qdqa4w4 with BM 128 or 256 and "
                "BN 128, without split-K, a persistent grid or an activation (it sums partial "
                "tiles), not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", split-K ", s.splitK,
                s.persistent ? ", persistent" : "");
  if (s.imageStream &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.bm != 128 || s.persistent ||
       s.streamK || (s.imageStream != 8 && s.imageStream != 16 && s.imageStream != 32)))
    return fail("the streamed image (_is<R>) is a variant of the sm_90a gemm_qdqa4w4 with BM 128 "
                "(one image block a tile), one tile per workgroup (no persistent grid or "
                "stream-K), after a "
                "quantizer of R = 8, 16 or 32 rows; got ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", R = ", s.imageStream,
                s.persistent ? ", persistent" : "", s.streamK ? ", stream-K" : "");
  if (storesActMx(s.epilogue) &&
      (s.op != OpKind::MoeGemm || s.activation == Activation::None ||
       s.activationParams[0] != 0.0f || s.activationParams[1] != 0.0f || s.bn % 64 != 0))
    return fail("the fused activation epilogue (e", toString(s.epilogue),
                ") is moe_gemm's, with a gated activation whose parameters are "
                "run-time arguments (0 in the name) and BN a multiple of 64 (8 gate/up pairs "
                "of 8 columns per 32-column MXFP4 block); got ",
                toString(s.op), " on ", arch, ", activation ", toString(s.activation), ", BN ",
                s.bn);
  if (s.epilogue == Epilogue::Scatter &&
      (s.op != OpKind::MoeGemm || s.activation != Activation::None))
    return fail("the scatter epilogue (escatter: weighted rows added atomically to their "
                "tokens' f32 rows) is moe_gemm's, with no activation; got ",
                toString(s.op), " on ", arch, ", activation ", toString(s.activation));
  if (s.op == OpKind::MoeGemm && !storesActMx(s.epilogue) &&
      (s.activation != Activation::None ||
       (s.epilogue != Epilogue::BF16 && s.epilogue != Epilogue::Scatter)))
    return fail("moe_gemm (the MoE stages' grouped GEMM) stores bf16 or scatters f32 with no "
                "activation, or its fused activation epilogue (eactmx); got activation ",
                toString(s.activation), ", epilogue ", toString(s.epilogue));
  if (s.op == OpKind::MoeGemm && s.splitK != 1 && (s.arch != Arch::SM90A || s.bm >= 128))
    return fail("moe_gemm splits K on sm_90a below BM 128 (partial tiles through a global "
                "workspace, not a cluster); got split-K ",
                s.splitK, " on ", arch, " with BM ", s.bm);
  const bool preQuantized =
      s.op == OpKind::GemmMxA4W4 || s.op == OpKind::GemmQdqA4W4 || s.op == OpKind::MoeGemm;
  if (preQuantized && s.op != OpKind::MoeGemm && s.arch != Arch::SM90A)
    return fail(toString(s.op), " (pre-quantized activations) is implemented for sm_90a only, got ",
                arch);
  if (preQuantized && s.epilogue == Epilogue::BF16DumpQuant)
    return fail(toString(s.op), " quantizes nothing: the quantization dump (epilogue bf16dq) does "
                                "not apply");
  if (s.arch == Arch::SM90A) {
    // The step counts below divide by BK: an invalid one gets the common
    // checks' message instead (a name with "bk0" divided by zero).
    if (s.bk != 128 && s.bk != 256)
      return verifyCommon(s);
    if (s.bn != sm90::kTileRows && s.bn != sm90::kNarrowTileRows && s.bn != sm90::kWideTileRows &&
        !s.warpSplitK)
      return fail("gemm_a4w4 on sm_90a: BN must be 128 or 64 (4 warps x 32 or 16 weight rows), "
                  "or 192 for gemm_qdqa4w4 at BM 128, got ",
                  s.bn);
    if (s.bn == sm90::kWideTileRows &&
        (s.op != OpKind::GemmQdqA4W4 || s.bm != 128 || s.bk != 128 || s.streamK || s.persistent))
      return fail("gemm_a4w4 on sm_90a: BN 192 is a tile of gemm_qdqa4w4 with BM 128 and BK "
                  "128, one tile per workgroup; got ",
                  toString(s.op), " with BM ", s.bm, ", BK ", s.bk, s.streamK ? ", stream-K" : "",
                  s.persistent ? ", persistent" : "");
    if (s.bn == sm90::kNarrowTileRows && (s.bm > 128 || s.twoWarpgroups))
      return fail("gemm_a4w4 on sm_90a: BN 64 runs one warpgroup, so BM <= 128 and not two "
                  "warpgroups, got BM ",
                  s.bm, s.twoWarpgroups ? " with two warpgroups" : "");
    const bool staged = s.op == OpKind::GemmQdqA4W4;
    if (s.bm != 8 && s.bm != 16 && s.bm != 32 && s.bm != 64 && s.bm != 128 &&
        !(staged && (s.bm == 192 || s.bm == 256)))
      return fail("gemm_a4w4 on sm_90a: BM must be 8, 16, 32, 64 or 128 (or 192 or 256 for "
                  "gemm_qdqa4w4), got ",
                  s.bm);
    if (s.bm > 128 && s.bk != 128)
      return fail("gemm_qdqa4w4 on sm_90a: BM ", s.bm, " takes BK 128, got ", s.bk);
    if (s.bm == 256 && s.persistent)
      return fail("gemm_qdqa4w4 on sm_90a: BM 256 takes no persistent grid (its 72.5 KiB "
                  "stages leave no room for the output tile)");
    // The K loop is pipelined over at least two steps (validated on the H200).
    const int64_t steps = s.k > 0 ? gemmWeightK(s.arch, s.k) / s.bk : 0;
    if (s.k > 0 && steps < 2)
      return fail("gemm_a4w4 on sm_90a needs at least two ", s.bk,
                  "-element K steps, got K = ", s.k);
    if (s.splitK < 1 || steps / s.splitK < 2)
      return fail("gemm_a4w4 on sm_90a: split-K ", s.splitK, " must leave at least 2 of the ",
                  steps, " K steps to every split");
    // The activations' two buffers (the image's kernels stage them instead).
    if (!staged && s.bm * s.bk > 128 * 128)
      return fail("gemm_a4w4 on sm_90a: BM x BK = ", s.bm * s.bk,
                  " exceeds the 64 KiB of shared memory (at most 16384)");
    const sm90::SharedLayout layout = sm90SharedLayout(s);
    if (s.decode && layout.totalBytes() > sm90::kMaxSharedBytes)
      return fail("gemm_a4w4 on sm_90a: the decode variant keeps every K step's activations "
                  "in shared memory: ",
                  layout.totalBytes(), " bytes for BM ", s.bm, " and ", layout.stages,
                  " steps exceed ", sm90::kMaxSharedBytes,
                  "; use more splits or no decode variant");
    // A persistent workgroup issues the next tile's first S - 1 steps from
    // inside this tile's loop.
    if (s.persistent && steps < layout.stages - 1)
      return fail("gemm_qdqa4w4 on sm_90a: a persistent grid needs at least ", layout.stages - 1,
                  " K steps (its stages less one), got ", steps);
    if (s.stages != 0) {
      const int64_t bytes = layout.totalBytes();
      if (s.stages < 2 || s.stages > 8 || bytes > sm90::kMaxSharedBytes)
        return fail("gemm_a4w4 on sm_90a: stages must be 2..8 and fit ",
                    sm90::kMaxSharedBytes / 1024, " KiB of shared memory; ", s.stages,
                    " stages of this tile take ", bytes, " bytes");
    }
    // The default stage count can overflow too (BM 128 x BK 256 on the
    // image: its launch failed in cuFuncSetAttribute).
    if (layout.totalBytes() > sm90::kMaxSharedBytes)
      return fail("gemm_a4w4 on sm_90a: BM ", s.bm, " x BK ", s.bk, " on ", layout.stages,
                  " stages takes ", layout.totalBytes(), " bytes of shared memory, over the ",
                  sm90::kMaxSharedBytes / 1024, " KiB of an SM; use fewer stages or BK 128");
    return verifyCommon(s);
  }
  if (s.epilogue == Epilogue::BF16DumpQuant)
    return fail("gemm_a4w4 on ", arch,
                ": the quantization dump (epilogue bf16dq) is "
                "implemented for sm_90a only");
  // Split-K sums its partial tiles through the workspace (AmdStoreSplitK.cpp);
  // the MoE GEMM's epilogues do not take it on AMD.
  if (s.splitK != 1 && s.op != OpKind::GemmA4W4)
    return fail(toString(s.op), " on ", arch, ": split-K is implemented for gemm_a4w4 only");
  if (s.splitK != 1) {
    const int64_t steps = s.k > 0 && s.bk > 0 ? gemmWeightK(s.arch, s.k) / s.bk : 0;
    const int64_t most = targetInfo(s.arch).maxSplitK;
    if (s.splitK > most || (steps > 0 && s.splitK > steps))
      return fail("gemm_a4w4 on ", arch, ": split-K takes 2 to ", most,
                  " splits and at most one per K step (", steps, "), got ", s.splitK);
  }
  // The AMD GEMM: 4 waves x 64 columns.
  if (s.bn != targetInfo(s.arch).defaultBn)
    return fail("gemm_a4w4 on ", arch, ": BN must be ", targetInfo(s.arch).defaultBn, ", got ",
                s.bn);
  // moe_gemm copies its rows (no inline quantizer to split): any row block
  // of 16 up to the target's largest.
  const int64_t maxMoeBm = targetInfo(s.arch).maxMoeBlockM;
  if (s.op == OpKind::MoeGemm && s.bm != 16 && s.bm != 32 && !(s.bm == 64 && maxMoeBm >= 64) &&
      !(s.bm == 128 && maxMoeBm >= 128))
    return fail("moe_gemm on ", arch, ": BM (block_m) must be ",
                maxMoeBm >= 128  ? "16, 32, 64 or 128"
                : maxMoeBm >= 64 ? "16, 32 or 64"
                                 : "16 or 32",
                ", got ", s.bm);
  if (s.op != OpKind::MoeGemm && s.bm != 16 && s.bm != 64)
    return fail("gemm_a4w4: BM must be 16 or 64, got ", s.bm);
  return verifyCommon(s);
}

} // namespace mxfp4
