//===- GemmA4W4Plan.cpp - The kernels one dense GEMM call runs ------------===//
//
// Dispatch without a device: the tile table's choice for M, the caller's
// overrides applied to it, and the verified specs of the kernels gemmA4W4
// (Ops/GemmA4W4.cpp) launches. The AOT presets of mxfp4-jit-compile call
// the same function.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Ops/QuantizeMx.h"
#include "mxfp4/Support/Log.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace mxfp4 {

template <typename... Parts> static Error fail(const Parts &...parts) {
  return makeError(parts...);
}

std::vector<KernelSpec> GemmA4W4Plan::kernels() const {
  std::vector<KernelSpec> all;
  if (quantizer)
    all.push_back(*quantizer);
  all.insert(all.end(), gemms.begin(), gemms.end());
  return all;
}

/// The table's tile for the weights' whole tiles (gemmWeightRows,
/// gemmWeightK), less the variants that need N and K to be whole tiles
/// (verifyKernelSpec): no stream-K with an N tail; with a K tail the
/// activations are quantized inline (the image and the quantizer kernels
/// take whole K steps), on one warpgroup's tiles of at most 128 rows.
static GemmA4W4Tile tableTile(const GemmWeightFacts &w, int64_t m, bool warpSplit) {
  const int64_t rows = gemmWeightRows(w.arch, w.n), kw = gemmWeightK(w.arch, w.k);
  GemmA4W4Tile tile = selectGemmA4W4Tile(w.arch, rows, kw, m, warpSplit);
  if (rows != w.n)
    tile.streamK = false;
  if (kw != w.k && tile.preQuantize) {
    tile.preQuantize = false;
    tile.streamK = tile.persistent = tile.twoWarpgroups = false;
    tile.splitM = 0;
    tile.imageStream = 0;
    tile.stages = 0;
    tile.bm = std::min<int64_t>(tile.bm, 128);
    if (tile.bm == 128 || tile.bn == sm90::kWideTileRows)
      tile.bk = 0;
    if (tile.bn == sm90::kWideTileRows)
      tile.bn = 0;
  }
  return tile;
}

/// The tile the table picks for M, with the caller's overrides.
static GemmA4W4Tile chooseTile(const GemmWeightFacts &w, int64_t m,
                               const GemmA4W4Options &options) {
  const experimental::GemmA4W4Overrides &o = options.overrides;
  GemmA4W4Tile tile = tableTile(w, m, o.warpSplitK.value_or(1) != 0);
  const bool otherBm = o.bm && *o.bm != tile.bm;
  const bool otherPath = o.preQuantize && *o.preQuantize != tile.preQuantize;
  // The table's stage count belongs to its tile and kernel: another BM, the
  // other activation path or the decode variant (which has no stages) takes
  // its own default unless the stages are forced too.
  if (otherBm || otherPath || (o.decode && *o.decode))
    tile.stages = 0;
  // So do its variants: another BM, split-K, split M or activation path
  // leaves the decode variant (and the BK it came with) and stream-K, and a
  // forced persistent grid leaves stream-K, unless those are forced too.
  const bool reshaped = otherBm || otherPath || (o.splitK && *o.splitK != tile.splitK) ||
                        (o.splitM && *o.splitM != tile.splitM);
  if (tile.decode && !o.decode && reshaped) {
    tile.decode = false;
    tile.bk = 0;
    tile.decodeGroups = 1;
  }
  if (tile.streamK && !o.streamK && (reshaped || (o.persistent && *o.persistent)))
    tile.streamK = false;
  // The warp-split variant (and the BN it came with) gives way to any other
  // forced shape or variant, and to a quantization dump.
  const bool dumps = options.dumpCodes || options.dumpScales;
  if (tile.warpSplitK && !o.warpSplitK &&
      (reshaped || dumps || (o.decode && *o.decode) || o.bn || o.bk || o.stages)) {
    tile.warpSplitK = 0;
    if (!o.bn)
      tile.bn = 0;
  }
  // What is forced replaces the table's.
  auto take = [](auto &field, const auto &forced) {
    if (forced)
      field = *forced;
  };
  if (o.bm)
    tile.splitM = 0;
  take(tile.bm, o.bm);
  take(tile.splitM, o.splitM);
  take(tile.splitK, o.splitK);
  take(tile.bk, o.bk);
  take(tile.bn, o.bn);
  take(tile.preQuantize, o.preQuantize);
  take(tile.stages, o.stages);
  take(tile.twoWarpgroups, o.twoWarpgroups);
  take(tile.persistent, o.persistent);
  take(tile.decode, o.decode);
  take(tile.decodeGroups, o.decodeGroups);
  if (o.warpSplitK && *o.warpSplitK != tile.warpSplitK) {
    tile.warpSplitK = *o.warpSplitK;
    // Its tile, unless forced otherwise: BM 8, BN 32, BK 128, one split, no
    // decode variant; turned off, the table's BN 16 / 32 goes with it.
    if (tile.warpSplitK) {
      if (!o.bm)
        tile.bm = 8;
      if (!o.bn)
        tile.bn = 32;
      if (!o.splitK)
        tile.splitK = 1;
      if (!o.bk)
        tile.bk = 0;
      if (!o.decode)
        tile.decode = false;
    } else if (!o.bn) {
      tile.bn = 0;
    }
  }
  take(tile.imageStream, o.imageStream);
  if (o.streamK) {
    tile.streamK = *o.streamK;
    // Stream-K replaces the table's split-K unless that is forced too.
    if (tile.streamK && !o.splitK)
      tile.splitK = 1;
  }
  // A forced BN 192 runs one tile per workgroup: it leaves the table's
  // persistent grid and stream-K unless those are forced too. The table's
  // BN 192 is a BM 128 x BK 128 tile on the image, one per workgroup: other
  // forced variants take BN 128 unless BN is forced too (gemm_mxa4w4:
  // preQuantizedSpec).
  if (o.bn && *o.bn == sm90::kWideTileRows) {
    if (!o.persistent)
      tile.persistent = false;
    if (!o.streamK)
      tile.streamK = false;
  }
  if (!o.bn && tile.bn == sm90::kWideTileRows &&
      (tile.bm != 128 || (tile.bk != 0 && tile.bk != 128) || !tile.preQuantize || tile.persistent ||
       tile.streamK || tile.decode))
    tile.bn = 0;
  // The table's BN 64 runs one warpgroup without stream-K: a forced BM 256,
  // second warpgroup or stream-K takes BN 128 unless BN is forced too.
  if (!o.bn && tile.bn == sm90::kNarrowTileRows &&
      (tile.bm > 128 || tile.twoWarpgroups || tile.streamK))
    tile.bn = 0;
  return tile;
}

/// Folds the weight scales into the dequantization when every one is below
/// 128 (or as the caller forces, where allowed).
static Error chooseFold(KernelSpec &spec, const GemmWeightFacts &w,
                        const experimental::GemmA4W4Overrides &o) {
  spec.foldedScales = w.arch == Arch::SM90A && w.scalesBelow128;
  if (!o.foldScales)
    return Error::success();
  if (*o.foldScales && !spec.foldedScales)
    return fail("foldScales: only sm_90a kernels fold weight scales, and only when every scale "
                "is below 128 (these weights: ",
                w.arch == Arch::SM90A ? "a scale is 128 or more" : "not sm_90a", ")");
  spec.foldedScales = *o.foldScales;
  return Error::success();
}

/// The verified spec of a GEMM on activations quantized before it
/// (gemm_mxa4w4 or gemm_qdqa4w4): the rounding was the quantizer's.
static Expected<KernelSpec> preQuantizedSpec(OpKind op, const GemmWeightFacts &w,
                                             const GemmA4W4Tile &tile,
                                             const GemmA4W4Options &options,
                                             int64_t streamRows = 0) {
  const experimental::GemmA4W4Overrides &o = options.overrides;
  // BM 256 exists on the image only; the MXFP4-activation GEMM (also what a
  // quantization dump runs) takes the same tile at BM 128.
  const int64_t bm = op == OpKind::GemmQdqA4W4 ? tile.bm : std::min<int64_t>(tile.bm, 128);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(w.arch, w.n, w.k, bm, kDefaultScaleRounding,
                                               Activation::None, {0.0f, 0.0f}, op);
  if (!spec)
    return spec.takeError();
  spec->splitK = tile.splitK;
  spec->stages = tile.stages;
  // Two warpgroups are a variant of the kernel on the image only (a
  // quantization dump takes gemm_mxa4w4 with the same tile).
  spec->twoWarpgroups = tile.twoWarpgroups && op == OpKind::GemmQdqA4W4 && tile.bm < 128;
  spec->persistent = tile.persistent && op == OpKind::GemmQdqA4W4 && tile.splitK == 1;
  // Stream-K replaces the persistent grid where both are asked for.
  spec->streamK = tile.streamK && op == OpKind::GemmQdqA4W4 && tile.splitK == 1 && bm >= 128;
  if (spec->streamK)
    spec->persistent = false;
  if (tile.bk)
    spec->bk = tile.bk;
  // So does the table's BN 192: gemm_mxa4w4 takes BN 128 unless forced;
  // and the warp-split variant's BN (it quantizes inline, so not here).
  if (o.warpSplitK && *o.warpSplitK)
    return fail(toString(op), ": warpSplitK = ", *o.warpSplitK,
                " quantizes inline; it does not apply to pre-quantized activations");
  if (tile.bn && (tile.bn != sm90::kWideTileRows || op == OpKind::GemmQdqA4W4 || o.bn) &&
      (!tile.warpSplitK || o.bn))
    spec->bn = tile.bn;
  spec->imageStream = streamRows;
  if (Error e = chooseFold(*spec, w, o))
    return e;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  return spec;
}

/// gemm_mxa4w4 after quant_mxfp4 (its activations arrive as codes and
/// scales, so the rounding and a dump do not apply).
static Expected<GemmA4W4Plan> planMx(const GemmWeightFacts &w, int64_t m,
                                     const GemmA4W4Options &options) {
  if (options.dumpCodes || options.dumpScales)
    return fail("gemmMxA4W4: the activations are already quantized; there is nothing to dump");
  GemmA4W4Plan plan;
  plan.path = GemmA4W4Plan::Path::MxActivations;
  Expected<KernelSpec> spec =
      preQuantizedSpec(OpKind::GemmMxA4W4, w, chooseTile(w, m, options), options);
  if (!spec)
    return spec.takeError();
  plan.gemms.push_back(*spec);
  return plan;
}

/// qdq_mxfp4 and gemm_qdqa4w4 (split in M, or streamed, as the tile says).
static Expected<GemmA4W4Plan> planImage(const GemmWeightFacts &w, int64_t m,
                                        const GemmA4W4Options &options, const GemmA4W4Tile &tile) {
  const experimental::GemmA4W4Overrides &o = options.overrides;
  GemmA4W4Plan plan;
  plan.path = GemmA4W4Plan::Path::Image;
  // The streamed image: BM 128 tiles, one a workgroup, one launch (the
  // table's gives way to other forced variants; forced, it must fit).
  const bool streamable = tile.bm == 128 && tile.splitM == 0 && !tile.persistent && !tile.streamK &&
                          o.quantizerBm.value_or(0) <= 32;
  if (tile.imageStream && !streamable && o.imageStream)
    return fail("gemmA4W4: imageStream streams the activation image to a BM 128 GEMM of one "
                "tile per workgroup, no split M, after a quantizer of at most 32 rows; this "
                "call has BM ",
                tile.bm, tile.persistent ? ", a persistent grid" : "",
                tile.streamK ? ", stream-K" : "", tile.splitM ? ", a split M" : "");
  if (tile.imageStream < 0 || tile.imageStream > 16)
    return fail("gemmA4W4: imageStream takes 1 to 16 quantizer workgroups per SM (0: off), got ",
                tile.imageStream);
  if (tile.imageStream && streamable) {
    plan.path = GemmA4W4Plan::Path::StreamedImage;
    plan.streamWorkgroupsPerSm = tile.imageStream;
    const int64_t rows = o.quantizerBm.value_or(streamedQuantizerRows(m));
    Expected<KernelSpec> gemm = preQuantizedSpec(OpKind::GemmQdqA4W4, w, tile, options, rows);
    if (!gemm)
      return gemm.takeError();
    Expected<KernelSpec> quant =
        makeQuantizeMxSpec(w.arch, w.k, rows, options.rounding, OpKind::QdqMx);
    if (!quant)
      return fail("qdqMxfp4Streamed: ", quant.takeError().message());
    // The pieces follow the splits' K order where they split K evenly.
    quant->imageStream = (w.k / 128) % tile.splitK == 0 ? tile.splitK : 1;
    if (Error e = verifyKernelSpec(*quant))
      return fail("qdqMxfp4Streamed: ", e.message());
    plan.quantizer = *quant;
    plan.gemms.push_back(*gemm);
    return plan;
  }
  Expected<KernelSpec> quant = makeQuantizeMxSpec(
      w.arch, w.k, o.quantizerBm.value_or(0) ? *o.quantizerBm : selectQuantizeMxBm(m, w.k),
      options.rounding, OpKind::QdqMx);
  if (!quant)
    return quant.takeError();
  plan.quantizer = *quant;
  Expected<KernelSpec> first = preQuantizedSpec(OpKind::GemmQdqA4W4, w, tile, options);
  if (!first)
    return first.takeError();
  plan.gemms.push_back(*first);
  if (tile.splitM == 0)
    return plan;
  // Rows [0, splitM) with this tile, the rest with the table's tile for
  // them: a grid of whole waves, then a smaller one (its image rows start
  // at a 256-row pair).
  plan.splitM = tile.splitM;
  GemmA4W4Tile rest = selectGemmA4W4Tile(w.arch, gemmWeightRows(w.arch, w.n),
                                         gemmWeightK(w.arch, w.k), m - tile.splitM);
  rest.preQuantize = true;
  rest.splitM = 0;
  Expected<KernelSpec> second = preQuantizedSpec(OpKind::GemmQdqA4W4, w, rest, options);
  if (!second)
    return second.takeError();
  plan.gemms.push_back(*second);
  return plan;
}

/// One gemm_a4w4 quantizing inline.
static Expected<GemmA4W4Plan> planInline(const GemmWeightFacts &w, const GemmA4W4Options &options,
                                         const GemmA4W4Tile &tile, bool dump) {
  const experimental::GemmA4W4Overrides &o = options.overrides;
  // The table's BM 256 exists on the activation image only: quantizing
  // inline (as forced) takes BM 128.
  const int64_t bm = o.bm ? tile.bm : std::min<int64_t>(tile.bm, 128);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(w.arch, w.n, w.k, bm, options.rounding);
  if (!spec)
    return spec.takeError();
  if (tile.bn)
    spec->bn = tile.bn;
  spec->splitK = tile.splitK;
  spec->stages = tile.stages;
  if (tile.bk)
    spec->bk = tile.bk;
  if (dump)
    spec->epilogue = Epilogue::BF16DumpQuant;
  spec->decode = tile.decode;
  spec->decodeGroups = tile.decode ? tile.decodeGroups : 1;
  spec->warpSplitK = tile.warpSplitK;
  if (Error e = chooseFold(*spec, w, o))
    return e;
  // The table's decode variant gives way where forced options leave a spec
  // it cannot run (uneven splits, too many activations for shared memory,
  // a dump): first its warpgroups splitting K, then the variant; asked for
  // explicitly, verifyKernelSpec below says why.
  if (spec->decode && spec->decodeGroups > 1 && !o.decodeGroups && verifyKernelSpec(*spec))
    spec->decodeGroups = 1;
  if (spec->decode && !o.decode.value_or(false) && !o.decodeGroups && verifyKernelSpec(*spec))
    spec->decode = false;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  GemmA4W4Plan plan;
  plan.gemms.push_back(*spec);
  return plan;
}

/// planFromTunedRow for a row already verified (every row of a TunedTable
/// is): what dispatch runs per call.
static Expected<GemmA4W4Plan> planFromVerifiedRow(const TunedRow &row, const GemmWeightFacts &w,
                                                  int64_t m, const GemmA4W4Options &options) {
  std::vector<KernelSpec> ks = row.kernels;
  for (KernelSpec &s : ks) {
    // The rounding is the caller's and the folding the weights' (both
    // choose bits, not speed); the rest is the row's.
    if (s.op == OpKind::GemmA4W4 || isQuantizer(s.op))
      s.rounding = options.rounding;
    if (!isQuantizer(s.op)) // a dense GEMM: a verified row holds nothing else
      s.foldedScales = w.arch == Arch::SM90A && w.scalesBelow128;
    if (Error e = verifyKernelSpec(s))
      return fail(row.origin, ": ", s.name(), ": ", e.message());
  }
  GemmA4W4Plan plan;
  size_t g = 0;
  if (isQuantizer(ks[0].op))
    plan.quantizer = ks[g++];
  switch (ks[g].op) {
  case OpKind::GemmA4W4:
    plan.path = GemmA4W4Plan::Path::Inline;
    break;
  case OpKind::GemmMxA4W4:
    plan.path = GemmA4W4Plan::Path::MxActivations;
    break;
  default:
    plan.path =
        row.streamWorkgroupsPerSm ? GemmA4W4Plan::Path::StreamedImage : GemmA4W4Plan::Path::Image;
    break;
  }
  plan.streamWorkgroupsPerSm = row.streamWorkgroupsPerSm;
  plan.gemms.push_back(ks[g]);
  // Below its split the row's first GEMM takes every row.
  if (row.splitM && m > row.splitM) {
    plan.splitM = row.splitM;
    plan.gemms.push_back(ks[g + 1]);
  }
  return plan;
}

Expected<GemmA4W4Plan> planFromTunedRow(const TunedRow &row, const GemmWeightFacts &w, int64_t m,
                                        const GemmA4W4Options &options) {
  if (Error e = verifyTunedRow(row))
    return fail(row.origin, ": ", e.message());
  if (row.key.op != TunedOp::Gemm || row.key.arch != w.arch || row.key.n != w.n || row.key.k != w.k)
    return fail(row.origin, ": the row is for another target, op or shape");
  return planFromVerifiedRow(row, w, m, options);
}

TunedRow tunedRowFromPlan(const GemmA4W4Plan &plan, const TunedKey &key, int64_t m) {
  TunedRow row;
  row.key = key;
  row.m = m;
  row.splitM = plan.splitM;
  row.streamWorkgroupsPerSm = plan.streamWorkgroupsPerSm;
  row.kernels = plan.kernels();
  return row;
}

Expected<GemmA4W4Plan> planGemmA4W4(const GemmWeightFacts &w, int64_t m,
                                    const GemmA4W4Options &options, bool mxActivations) {
  const bool tunable = !mxActivations && !options.overrides.any() && !options.dumpCodes &&
                       !options.dumpScales && m >= 1;
  if (!tunable)
    return planGemmA4W4(nullptr, w, m, options, mxActivations);
  Expected<const TunedTable *> tuned = processTunedTable();
  if (!tuned)
    return tuned.takeError();
  return planGemmA4W4(*tuned, w, m, options, mxActivations);
}

Expected<GemmA4W4Plan> planGemmA4W4(const TunedTable *tuned, const GemmWeightFacts &w, int64_t m,
                                    const GemmA4W4Options &options, bool mxActivations) {
  const experimental::GemmA4W4Overrides &o = options.overrides;
  if (m < 1)
    return fail(mxActivations ? "gemmMxA4W4" : "gemmA4W4", ": M must be >= 1, got ", m);
  if (mxActivations)
    return planMx(w, m, options);
  const bool dump = options.dumpCodes || options.dumpScales;
  if (dump && !(options.dumpCodes && options.dumpScales))
    return fail("gemmA4W4: the quantization dump needs both dumpCodes and dumpScales");
  if (tuned && !dump && !o.any()) {
    if (const TunedRow *row = tuned->find(TunedKey::gemm(w.arch, w.computeUnits, w.n, w.k), m)) {
      Expected<GemmA4W4Plan> plan = planFromVerifiedRow(*row, w, m, options);
      if (plan) {
        logDebug(strCat("gemmA4W4 M=", m, ": tuned row ", row->origin, " (m <= ", row->m, ")"));
        return plan;
      }
      // A row tuned with another rounding may name a kernel that does not
      // exist with this one: the table decides instead.
      logDebug(strCat("gemmA4W4 M=", m, ": tuned row does not apply (", plan.takeError().message(),
                      "); the tile table decides"));
    }
  }
  GemmA4W4Tile tile = chooseTile(w, m, options);
  if (o.decodeGroups && *o.decodeGroups != 1 && !tile.decode)
    return fail("gemmA4W4: decodeGroups = ", *o.decodeGroups,
                " splits the decode variant's K steps, which this call does not run (M = ", m,
                "); force decode = true too, or leave decodeGroups unset");
  if (tile.splitM != 0 && (tile.splitM % 256 != 0 || tile.splitM >= m || tile.splitM < 0))
    return fail("gemmA4W4: splitM must be a positive multiple of 256 below M = ", m, ", got ",
                tile.splitM);
  if (tile.warpSplitK && tile.preQuantize)
    return fail("gemmA4W4: warpSplitK = ", tile.warpSplitK,
                " quantizes inline; it does not apply with preQuantize");
  const bool image = tile.preQuantize && !dump && o.dequantizeOnce.value_or(true);
  if (o.splitM.value_or(0) != 0 && !image)
    return fail("gemmA4W4: splitM splits the dequantize-once path (qdq_mxfp4 + gemm_qdqa4w4); "
                "it does not apply with inline quantization, a quantization dump or "
                "dequantizeOnce = false");
  if (image)
    return planImage(w, m, options, tile);
  if (!tile.preQuantize)
    return planInline(w, options, tile, dump);
  // Quantize once (into the dump buffers when asked: same format), then the
  // GEMM on MXFP4 activations, as gemmMxA4W4 plans it.
  Expected<KernelSpec> quant = makeQuantizeMxSpec(w.arch, w.k, selectQuantizeMxBm(m, w.k),
                                                  options.rounding, OpKind::QuantizeMx);
  if (!quant)
    return quant.takeError();
  GemmA4W4Options rest = options;
  rest.dumpCodes = rest.dumpScales = nullptr;
  rest.overrides.preQuantize = true;
  Expected<GemmA4W4Plan> plan = planMx(w, m, rest);
  if (!plan)
    return plan.takeError();
  plan->quantizer = *quant;
  return plan;
}

Expected<std::vector<std::pair<int64_t, int64_t>>> presetShapes(std::string_view preset) {
  if (preset == "seed-dense")
    return std::vector<std::pair<int64_t, int64_t>>(std::begin(kSeedDenseShapes),
                                                    std::end(kSeedDenseShapes));
  if (preset == "model-dense")
    return std::vector<std::pair<int64_t, int64_t>>(std::begin(kModelDenseShapes),
                                                    std::end(kModelDenseShapes));
  return fail("unknown preset '", preset, "'; expected seed-dense or model-dense");
}

Expected<std::vector<TunedRow>> presetTunedRows(std::string_view preset, Arch arch) {
  Expected<std::vector<std::pair<int64_t, int64_t>>> shapes = presetShapes(preset);
  if (!shapes)
    return shapes.takeError();
  std::vector<TunedRow> rows;
  for (auto [n, k] : *shapes)
    for (int64_t m : kPresetMs) {
      const TunedKey key = TunedKey::gemm(arch, 0, n, k);
      Expected<GemmA4W4Plan> plan = planGemmA4W4(nullptr, {arch, n, k, true}, m);
      if (!plan)
        return fail(preset, ": ", toString(arch), " n=", n, " k=", k, " m=", m, ": ",
                    plan.takeError().message());
      TunedRow row = tunedRowFromPlan(*plan, key, m);
      row.tuner = "table";
      row.origin = strCat(preset, " n=", n, " k=", k, " m=", m);
      rows.push_back(std::move(row));
    }
  return rows;
}

std::vector<PresetKernel> tunedRowKernels(const std::vector<const TunedRow *> &rows,
                                          ScaleRounding rounding) {
  std::vector<PresetKernel> out;
  std::set<std::string> seen;
  GemmA4W4Options options;
  options.rounding = rounding;
  for (const TunedRow *row : rows) {
    if (row->key.op == TunedOp::FusedMoe) {
      // The next smaller row of the key, and whether a larger one follows.
      int64_t previous = 0;
      bool last = true;
      for (const TunedRow *other : rows)
        if (other->key == row->key) {
          if (other->m < row->m)
            previous = std::max(previous, other->m);
          if (other->m > row->m)
            last = false;
        }
      appendMoeRowKernels(out, seen, *row, previous, rounding, last);
      continue;
    }
    for (bool small : {true, false}) {
      const TunedKey &key = row->key;
      // A preset's rows are its points; a CSV row says where it comes from.
      const std::string label =
          strCat(toString(key.arch), " n=", key.n, " k=", key.k, " m=", row->m,
                 row->tuner == "table" ? std::string() : strCat(" (", row->origin, ")"));
      GemmWeightFacts w{key.arch, key.n, key.k, small, key.computeUnits};
      Expected<GemmA4W4Plan> plan = planFromTunedRow(*row, w, row->m, options);
      if (!plan) {
        std::string error = plan.takeError().message();
        if (seen.insert(label + error).second)
          out.push_back({label, std::nullopt, error});
        continue;
      }
      for (const KernelSpec &s : plan->kernels())
        if (seen.insert(s.name()).second)
          out.push_back({label, s, ""});
    }
  }
  return out;
}

Expected<std::vector<PresetKernel>> presetKernels(std::string_view preset, Arch arch,
                                                  ScaleRounding rounding) {
  if (preset == "seed-moe" || preset == "model-moe")
    return moePresetKernels(preset, arch, rounding);
  Expected<std::vector<TunedRow>> rows = presetTunedRows(preset, arch);
  if (!rows)
    return rows.takeError();
  std::vector<const TunedRow *> all;
  for (const TunedRow &r : *rows)
    all.push_back(&r);
  // Dispatch follows the shipped rows for these shapes on a device of their
  // size: their kernels belong to the preset too.
  Expected<const TunedTable *> tuned = processTunedTable();
  if (!tuned)
    return tuned.takeError();
  std::set<TunedKey> keys;
  for (const TunedRow &r : *rows)
    if (keys.insert(r.key).second)
      for (const TunedRow *shipped : (*tuned)->rowsForShape(r.key))
        all.push_back(shipped);
  return tunedRowKernels(all, rounding);
}

} // namespace mxfp4
