//===- GemmA4W4Plan.h - The kernels one dense GEMM call runs -----*- C++ -*-===//
//
// planGemmA4W4 is dispatch: for a target, a weight shape, M and the
// caller's options it decides which kernels gemmA4W4 launches, in order,
// without touching a device. gemmA4W4 executes the plan it returns, and
// mxfp4-jit-compile's presets compile exactly the kernels of the plans of
// their points, so an AOT cache holds what dispatch asks for
// (MXFP4_ASSERT_CACHE_HIT=1).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_GEMMA4W4PLAN_H
#define MXFP4_OPS_GEMMA4W4PLAN_H

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/TunedCsv.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mxfp4 {

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
  /// workgroups per SM (GemmA4W4Overrides::imageStream); 0: not streamed.
  int64_t imageStream = 0;
};

/// The tile for (arch, N, K, M): the one table later tuning replaces.
/// `warpSplit` false: the tile it picks without the sm_90a warp-split
/// variant (what forcing warpSplitK = 0 runs).
GemmA4W4Tile selectGemmA4W4Tile(Arch arch, int64_t n, int64_t k, int64_t m, bool warpSplit = true);

/// What dispatch needs to know of the weights: the target they were
/// prepared for, their shape, and whether every scale is below 128 (the
/// sm_90a kernels then fold it; PreparedWeight::scalesBelow128).
struct GemmWeightFacts {
  Arch arch = Arch::GFX950;
  int64_t n = 0, k = 0;
  bool scalesBelow128 = false;
  /// The device's SMs / compute units (Device::multiprocessorCount): the
  /// tuned rows of that device size apply first; 0: any device's.
  int64_t computeUnits = 0;
};

/// The kernels of one GEMM call, in launch order.
struct GemmA4W4Plan {
  enum class Path : uint8_t {
    /// One GEMM quantizing its activations inline (gemm_a4w4).
    Inline,
    /// quant_mxfp4, then gemm_mxa4w4 on its codes and scales.
    MxActivations,
    /// qdq_mxfp4 writes the activation image, then gemm_qdqa4w4 (two of
    /// them when M is split).
    Image,
    /// qdq_mxfp4 and gemm_qdqa4w4 at once, the GEMM copying each piece of
    /// the image once it is published (Schedule::imageStream).
    StreamedImage,
  };
  Path path = Path::Inline;
  /// The quantizer ahead of the GEMMs; none on the inline path.
  std::optional<KernelSpec> quantizer;
  /// The streamed image: the quantizer's workgroups per SM.
  int64_t streamWorkgroupsPerSm = 0;
  /// One GEMM, or two when M is split: rows [0, splitM) by the first, the
  /// rest by the second (on the image, from its row splitM on).
  std::vector<KernelSpec> gemms;
  int64_t splitM = 0;

  /// Every kernel of the plan, quantizer first.
  std::vector<KernelSpec> kernels() const;
};

/// Dispatch for gemmA4W4 (`mxActivations` false) or gemmMxA4W4 (true):
/// the process's tuned row for the weights and M (processTunedTable,
/// Ops/TunedCsv.h) where one applies, else the tile table's choice for M
/// with the options' overrides, verified. Overrides, a dump or
/// ignoreTunedCsv leave the tuned rows aside. The dump pointers of
/// `options` only matter by being set or not.
Expected<GemmA4W4Plan> planGemmA4W4(const GemmWeightFacts &weights, int64_t m,
                                    const GemmA4W4Options &options = {},
                                    bool mxActivations = false);
/// The same with the tuned rows of `tuned` (null: the tile table alone).
Expected<GemmA4W4Plan> planGemmA4W4(const TunedTable *tuned, const GemmWeightFacts &weights,
                                    int64_t m, const GemmA4W4Options &options = {},
                                    bool mxActivations = false);

/// The plan of a tuned dense row for M: its kernels with the caller's
/// rounding and the weights' scale folding, the second GEMM when M is
/// above its split_m; an error (naming the row) if a kernel does not
/// verify so.
Expected<GemmA4W4Plan> planFromTunedRow(const TunedRow &row, const GemmWeightFacts &weights,
                                        int64_t m, const GemmA4W4Options &options = {});
/// The dense row that runs `plan` for the calls of `key` up to M = m.
TunedRow tunedRowFromPlan(const GemmA4W4Plan &plan, const TunedKey &key, int64_t m);

/// The (N, K) points of the dense presets (../shared/reference/semantics.md
/// section 8) and the M values they measure: "seed-dense" (the seed's 24
/// points) and "model-dense" (DeepSeek-R1 FP4, Kimi-K3 and AITER's other
/// dense shapes). mxfp4-bench measures them, mxfp4-jit-compile compiles them.
inline constexpr std::pair<int64_t, int64_t> kSeedDenseShapes[] = {
    {8448, 7168}, {7168, 4224}, {1536, 7168}, {7168, 768}};
inline constexpr std::pair<int64_t, int64_t> kModelDenseShapes[] = {
    // DeepSeek-R1 FP4 (dsv3_a4w4_blockscale) x 2, Kimi-K3 x 2, AITER's dense tests.
    {7168, 4608},
    {9216, 7168},
    {3584, 7168},
    {7168, 3584},
    {1536, 4224}};
inline constexpr int64_t kPresetMs[] = {1, 8, 32, 128, 512, 2048};

/// The (N, K) points of a preset, or an error naming the known ones.
Expected<std::vector<std::pair<int64_t, int64_t>>> presetShapes(std::string_view preset);

/// One kernel of a preset: the first point whose plan runs it ("<arch>
/// n=.. k=.. m=.."), and its spec, or why that point has no plan.
struct PresetKernel {
  std::string label;
  std::optional<KernelSpec> spec;
  std::string error;
};

/// A dense preset as tuned rows (tuner "table", any device size): at each
/// point, the plan the tile table gives.
Expected<std::vector<TunedRow>> presetTunedRows(std::string_view preset, Arch arch);

/// The kernels dispatch runs from `rows` with `rounding`, deduplicated in
/// first-use order; on sm_90a for weights with scales below 128 (folded)
/// and for any others. What mxfp4-jit-compile --from-csv compiles.
std::vector<PresetKernel> tunedRowKernels(const std::vector<const TunedRow *> &rows,
                                          ScaleRounding rounding);

/// The kernels gemmA4W4 runs at a preset's points on `arch` with default
/// options but `rounding`: those of its rows (presetTunedRows) and of
/// every shipped tuned row for its shapes on `arch`, whatever the device
/// size, deduplicated in first-use order. The MoE presets (seed-moe,
/// model-moe) are moePresetKernels'.
Expected<std::vector<PresetKernel>> presetKernels(std::string_view preset, Arch arch,
                                                  ScaleRounding rounding);

/// The kernels fusedMoeA4W4 (Ops/FusedMoe.h) runs at 1 to 4096 tokens on
/// seed 002's layer (seed-moe) or the MoE models' (model-moe: Kimi-K3,
/// GPT-OSS-120B, DeepSeek-R1 FP4 at TP 8), deduplicated in first-use order.
Expected<std::vector<PresetKernel>> moePresetKernels(std::string_view preset, Arch arch,
                                                     ScaleRounding rounding);

/// The kernels fusedMoeA4W4 runs from a fused_moe row: at its block_m for
/// every token count above `previousM` (the key's next smaller row) up to
/// its m, and with `last` beyond it until the kernels stop changing;
/// appended to `out` unless `seen` has them.
void appendMoeRowKernels(std::vector<PresetKernel> &out, std::set<std::string> &seen,
                         const TunedRow &row, int64_t previousM, ScaleRounding rounding, bool last);

} // namespace mxfp4

#endif // MXFP4_OPS_GEMMA4W4PLAN_H
