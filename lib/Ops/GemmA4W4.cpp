//===- GemmA4W4.cpp - The public dense A4W4 GEMM API ----------------------===//

#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Format/Layout.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Ops/QuantizeMx.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace mxfp4 {

PreparedWeight::~PreparedWeight() {
  for (void *p : {data, scales, descriptors})
    dev->free(p);
  for (auto &[stream, s] : scratch)
    for (const RowScratch &r : {s.splitK, s.activations, s.qdq}) {
      dev->free(r.first);
      dev->free(r.second);
    }
  for (void *p : retired)
    dev->free(p);
}

Expected<std::pair<void *, void *>> PreparedWeight::grow(RowScratch StreamScratch::*which,
                                                         int64_t m, size_t firstPerRow,
                                                         size_t secondPerRow, bool zeroed,
                                                         void *stream, const char *what) const {
  std::lock_guard<std::mutex> lock(scratchMutex);
  RowScratch &s = scratch[stream].*which;
  if (m <= s.rows)
    return std::make_pair(s.first, s.second);
  Expected<bool> capturing = dev->capturing(stream);
  if (!capturing)
    return capturing.takeError();
  if (*capturing)
    return makeError("this GEMM needs ", what, " scratch for ", m,
                     " rows and the PreparedWeight holds ", s.rows,
                     "; growing it allocates device memory, which cannot happen while the stream "
                     "is captured into a graph. Run the call (or one with a larger M) once "
                     "on this stream before capturing (scratch belongs to a stream)");
  int64_t want = std::max<int64_t>({s.rows * 2, m, 256});
  size_t bytes[2] = {size_t(want) * firstPerRow, size_t(want) * secondPerRow};
  void *fresh[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    if (bytes[i] == 0)
      continue;
    Expected<void *> p = dev->alloc(bytes[i]);
    Error e = p ? Error::success() : p.takeError();
    if (p)
      fresh[i] = *p;
    // Zeroed on the stream the kernels that use it run on, so ahead of them.
    if (!e && zeroed)
      e = dev->fill(fresh[i], 0, bytes[i], stream);
    if (e) {
      dev->free(fresh[0]);
      dev->free(fresh[1]);
      return e;
    }
  }
  // Work already queued (or captured into a graph) may still use the old
  // buffers: they stay allocated until the PreparedWeight goes, which costs
  // less than the buffers in use (they at least double).
  for (void *p : {s.first, s.second})
    if (p)
      retired.push_back(p);
  s = {fresh[0], fresh[1], want};
  return std::make_pair(s.first, s.second);
}

Expected<std::pair<void *, void *>> PreparedWeight::activationScratch(int64_t m,
                                                                      void *stream) const {
  return grow(&StreamScratch::activations, m, size_t(cols / 2), size_t(cols / 32), /*zeroed=*/false,
              stream, "MXFP4 activation");
}

Expected<void *> PreparedWeight::qdqScratch(int64_t m, void *stream) const {
  Expected<std::pair<void *, void *>> s =
      grow(&StreamScratch::qdq, sm90::activationImageScratchRows(m), size_t(cols) * 2, 0,
           /*zeroed=*/false, stream, "activation image");
  if (!s)
    return s.takeError();
  return s->first;
}

Expected<void *> PreparedWeight::imageFlagsScratch(int64_t m, void *stream) const {
  // One flag per 128-K chunk for every row (a 128-row block's are its first
  // row's): the index math stays the image's.
  Expected<std::pair<void *, void *>> s =
      grow(&StreamScratch::imageFlags, (m + 127) / 128, size_t(cols / 128) * 4, 0,
           /*zeroed=*/true, stream, "streamed image flag");
  if (!s)
    return s.takeError();
  return s->first;
}

Expected<std::pair<void *, void *>> PreparedWeight::splitKScratch(int64_t m, int64_t splits,
                                                                  void *stream) const {
  // An f32 per output element and split; one i32 counter per output tile is
  // at most one per row and 128 columns.
  return grow(&StreamScratch::splitK, m * splits, size_t(rows) * 4, size_t(rows / 128 + 1) * 4,
              /*zeroed=*/true, stream, "split-K");
}

template <typename... Parts> static Error fail(const Parts &...parts) {
  return makeError(parts...);
}

/// The TMA descriptors of sm_90a weights and scales, in device memory: with
/// BN 128 boxes, then with BN 64 boxes (Kernels/Sm90Pipeline.h has the
/// views and boxes).
static Expected<void *> sm90Descriptors(Device &dev, void *weights, void *scales, int64_t n,
                                        int64_t k) {
  using namespace sm90;
  const uint64_t chunks = uint64_t(k / 128);
  uint8_t all[4 * kDescriptorBytes];
  for (int64_t bn : {kTileRows, kNarrowTileRows}) {
    Expected<std::array<uint8_t, 128>> w =
        dev.encodeTensorMap(weights, {kTileChunkWords, chunks, uint64_t(n / 16)},
                            {kTileChunkWords, 1, uint32_t(bn / 16)});
    if (!w)
      return w.takeError();
    Expected<std::array<uint8_t, 128>> s =
        dev.encodeTensorMap(scales, {kGroupScaleWords, chunks, uint64_t(n / 32)},
                            {kGroupScaleWords, 1, uint32_t(bn / 32)});
    if (!s)
      return s.takeError();
    std::copy(w->begin(), w->end(), all + descriptorOffset(bn));
    std::copy(s->begin(), s->end(), all + descriptorOffset(bn) + kDescriptorBytes);
  }
  Expected<void *> d = dev.alloc(sizeof(all));
  if (!d)
    return d.takeError();
  if (Error e = dev.copyToDevice(*d, all, sizeof(all))) {
    dev.free(*d);
    return e;
  }
  return d;
}

Expected<std::unique_ptr<PreparedWeight>> prepareGemmA4W4Weight(Device &dev, Span<uint8_t> wFp4,
                                                                Span<uint8_t> wScale, int64_t n,
                                                                int64_t k,
                                                                std::optional<Arch> archOpt) {
  Arch arch;
  if (archOpt) {
    arch = *archOpt;
  } else {
    Expected<Arch> a = targetArch(&dev);
    if (!a)
      return a.takeError();
    arch = *a;
  }
  // The shape constraints are the kernels'; any M tile will do for checking.
  Expected<KernelSpec> spec = makeGemmA4W4Spec(arch, n, k, arch == Arch::SM90A ? 8 : 16);
  if (!spec)
    return spec.takeError();
  if (wFp4.size() != size_t(n * k / 2))
    return fail("prepareGemmA4W4Weight: packed weights for N = ", n, ", K = ", k, " are ",
                n * k / 2, " bytes, got ", wFp4.size());
  if (wScale.size() != size_t(n * k / 32))
    return fail("prepareGemmA4W4Weight: weight scales for N = ", n, ", K = ", k, " are ",
                n * k / 32, " bytes, got ", wScale.size());
  Expected<std::vector<uint8_t>> w = shuffleWeight(spec->weightLayout, wFp4, n, k / 2);
  if (!w)
    return w.takeError();
  Expected<std::vector<uint8_t>> s = shuffleScales(spec->scaleLayout, wScale, n, k / 32);
  if (!s)
    return s.takeError();
  Expected<void *> dw = dev.alloc(w->size());
  if (!dw)
    return dw.takeError();
  Expected<void *> ds = dev.alloc(s->size());
  if (!ds) {
    dev.free(*dw);
    return ds.takeError();
  }
  // Owns the buffers from here on; the descriptors point into them.
  auto prepared = std::make_unique<PreparedWeight>(dev, arch, n, k, *dw, *ds);
  if (Error e = dev.copyToDevice(*dw, w->data(), w->size()))
    return e;
  if (Error e = dev.copyToDevice(*ds, s->data(), s->size()))
    return e;
  if (arch == Arch::SM90A) {
    Expected<void *> dd = sm90Descriptors(dev, *dw, *ds, n, k);
    if (!dd)
      return dd.takeError();
    prepared->descriptors = *dd;
  }
  prepared->smallScales =
      std::all_of(wScale.begin(), wScale.end(), [](uint8_t s) { return s < 128; });
  return prepared;
}

/// Checks shared by both GEMM entry points.
static Error checkGemmArgs(const char *api, Device &dev, int64_t m, const PreparedWeight &w,
                           void *out) {
  if (m < 1)
    return fail(api, ": M must be >= 1, got ", m);
  if (!out)
    return fail(api, ": the output pointer must not be null");
  if (reinterpret_cast<uintptr_t>(out) % 16 != 0)
    return fail(api, ": the output pointer must be 16-byte aligned");
  if (&w.device() != &dev)
    return fail(api, ": the weights were prepared for another device");
  // Kernels index with 32 bits; the activation buffer is addressed in 16-byte units.
  if (m * w.n() >= (int64_t(1) << 31) || m * w.k() / 8 >= (int64_t(1) << 27))
    return fail(api, ": M = ", m,
                " is too large for 32-bit indexing (M * N must be < 2^31 and M * K < 2^30)");
  return Error::success();
}

/// The tile the table picks for M, with the caller's overrides.
static GemmA4W4Tile chooseTile(const PreparedWeight &w, int64_t m, const GemmA4W4Options &o) {
  GemmA4W4Tile tile = selectGemmA4W4Tile(w.arch(), w.n(), w.k(), m, o.warpSplitK.value_or(1) != 0);
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
  const bool dumps = o.dumpCodes || o.dumpScales;
  if (tile.warpSplitK && !o.warpSplitK &&
      (reshaped || dumps || (o.decode && *o.decode) || o.bn || o.bk || o.stages)) {
    tile.warpSplitK = 0;
    if (!o.bn)
      tile.bn = 0;
  }
  if (o.bm) {
    tile.bm = *o.bm;
    tile.splitM = 0;
  }
  if (o.splitM)
    tile.splitM = *o.splitM;
  if (o.splitK)
    tile.splitK = *o.splitK;
  if (o.bk)
    tile.bk = *o.bk;
  if (o.bn)
    tile.bn = *o.bn;
  if (o.preQuantize)
    tile.preQuantize = *o.preQuantize;
  if (o.stages)
    tile.stages = *o.stages;
  if (o.twoWarpgroups)
    tile.twoWarpgroups = *o.twoWarpgroups;
  if (o.persistent)
    tile.persistent = *o.persistent;
  if (o.decode)
    tile.decode = *o.decode;
  if (o.decodeGroups)
    tile.decodeGroups = *o.decodeGroups;
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
  if (o.imageStream)
    tile.imageStream = *o.imageStream;
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
static Error chooseFold(KernelSpec &spec, const PreparedWeight &w, const GemmA4W4Options &o) {
  spec.foldedScales = w.arch() == Arch::SM90A && w.scalesBelow128();
  if (!o.foldScales)
    return Error::success();
  if (*o.foldScales && !spec.foldedScales)
    return fail("foldScales: only sm_90a kernels fold weight scales, and only when every scale "
                "is below 128 (these weights: ",
                w.arch() == Arch::SM90A ? "a scale is 128 or more" : "not sm_90a", ")");
  spec.foldedScales = *o.foldScales;
  return Error::success();
}

/// Gets `spec`'s kernel and launches it: `front` (the activation arguments),
/// then W, its scales, C, M, the extra arguments and the split-K scratch.
static Error launchGemm(Device &dev, void *stream, const KernelSpec &spec,
                        std::vector<void *> front, const PreparedWeight &w, void *out, int64_t m,
                        std::vector<void *> extra) {
  void *ws = nullptr, *counters = nullptr;
  // Clustered splits (Sm90Pipeline.h) sum in shared memory, no global scratch.
  const bool scratch = spec.splitK > 1 && !(spec.arch == Arch::SM90A &&
                                            sm90::clusterSplitK(spec.bm, spec.splitK, spec.bn));
  // Whole M tiles: sm_90a stores each workgroup's tile as its threads hold it.
  const int64_t tileRows = (m + spec.bm - 1) / spec.bm * spec.bm;
  if (scratch) {
    Expected<std::pair<void *, void *>> scratch = w.splitKScratch(tileRows, spec.splitK, stream);
    if (!scratch)
      return scratch.takeError();
    std::tie(ws, counters) = *scratch;
  }
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(spec);
  if (!kernel)
    return kernel.takeError();
  if (spec.streamK) {
    // Two partial tiles per launched workgroup, a counter per tile (the
    // split-K scratch of enough rows holds both). The kernel's index math
    // is 32-bit: iterations x workgroups must stay below 2^31.
    const int64_t iterations = streamKIterations(spec, m);
    const int64_t groups = launchedGridX((*kernel)->geometry(m), dev.multiprocessorCount());
    if (iterations * groups >= (int64_t(1) << 31))
      return fail("gemmA4W4: stream-K over ", iterations, " iterations and ", groups,
                  " workgroups exceeds its 32-bit index math; use another tile");
    const int64_t rowBytes = w.n() * 4;
    const int64_t rows = std::max(tileRows, (streamKWorkspaceBytes(spec, groups) + rowBytes - 1) /
                                                rowBytes);
    Expected<std::pair<void *, void *>> scratch = w.splitKScratch(rows, 1, stream);
    if (!scratch)
      return scratch.takeError();
    std::tie(ws, counters) = *scratch;
  }
  void *wPtr = w.deviceData(), *sPtr = w.deviceScales(), *dPtr = w.deviceDescriptors();
  int32_t m32 = int32_t(m);
  // Arguments in the kernel's order (Kernels/GemmA4W4.h).
  std::vector<void *> args;
  for (void *&p : front)
    args.push_back(&p);
  args.push_back(&wPtr);
  args.push_back(&sPtr);
  if (spec.arch == Arch::SM90A)
    args.push_back(&dPtr);
  args.push_back(&out);
  args.push_back(&m32);
  for (void *&p : extra)
    args.push_back(&p);
  if (spec.splitK > 1 || spec.streamK) {
    args.push_back(&ws);
    args.push_back(&counters);
  }
  return dev.launch(**kernel, (*kernel)->geometry(m), args.data(), stream);
}

/// The verified spec of a GEMM on activations quantized before it
/// (gemm_mxa4w4 or gemm_qdqa4w4): the rounding was the quantizer's.
static Expected<KernelSpec> preQuantizedSpec(OpKind op, const PreparedWeight &w,
                                             const GemmA4W4Tile &tile,
                                             const GemmA4W4Options &options,
                                             int64_t streamRows = 0) {
  // BM 256 exists on the image only; the MXFP4-activation GEMM (also what a
  // quantization dump runs) takes the same tile at BM 128.
  const int64_t bm = op == OpKind::GemmQdqA4W4 ? tile.bm : std::min<int64_t>(tile.bm, 128);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(w.arch(), w.n(), w.k(), bm, kDefaultScaleRounding,
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
  if (options.warpSplitK && *options.warpSplitK)
    return fail(toString(op), ": warpSplitK = ", *options.warpSplitK,
                " quantizes inline; it does not apply to pre-quantized activations");
  if (tile.bn && (tile.bn != sm90::kWideTileRows || op == OpKind::GemmQdqA4W4 || options.bn) &&
      (!tile.warpSplitK || options.bn))
    spec->bn = tile.bn;
  spec->imageStream = streamRows;
  if (Error e = chooseFold(*spec, w, options))
    return e;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  return spec;
}

Error gemmMxA4W4(Device &dev, void *stream, const void *aCodes, const void *aScales, int64_t m,
                 const PreparedWeight &w, void *out, const GemmA4W4Options &options) {
  if (Error e = checkGemmArgs("gemmMxA4W4", dev, m, w, out))
    return e;
  if (!aCodes || !aScales)
    return fail("gemmMxA4W4: the activation codes and scales pointers must not be null");
  if (reinterpret_cast<uintptr_t>(aCodes) % 4 != 0)
    return fail("gemmMxA4W4: the activation codes pointer must be 4-byte aligned");
  if (options.dumpCodes || options.dumpScales)
    return fail("gemmMxA4W4: the activations are already quantized; there is nothing to dump");
  Expected<KernelSpec> spec =
      preQuantizedSpec(OpKind::GemmMxA4W4, w, chooseTile(w, m, options), options);
  if (!spec)
    return spec.takeError();
  return launchGemm(dev, stream, *spec, {const_cast<void *>(aCodes), const_cast<void *>(aScales)},
                    w, out, m, {});
}

/// The streamed image (KernelSpec::imageStream): qdq_mxfp4 publishing its
/// pieces, and the GEMM launched as its dependent copying each once it is
/// in. A failed GEMM launch zeroes the flags the quantizer counted into.
static Error launchStreamed(Device &dev, void *stream, const void *a, int64_t m,
                            const PreparedWeight &w, void *out, void *image,
                            const GemmA4W4Tile &tile, const GemmA4W4Options &options) {
  Expected<void *> flags = w.imageFlagsScratch(m, stream);
  if (!flags)
    return flags.takeError();
  ImageStream s;
  s.flags = *flags;
  // The pieces follow the splits' K order where they split K evenly.
  s.splits = (w.k() / 128) % tile.splitK == 0 ? tile.splitK : 1;
  s.workgroupsPerSm = tile.imageStream;
  const int64_t rows = options.quantizerBm.value_or(streamedQuantizerRows(m));
  Expected<KernelSpec> spec = preQuantizedSpec(OpKind::GemmQdqA4W4, w, tile, options, rows);
  if (!spec)
    return spec.takeError();
  if (Error e =
          qdqMxfp4Streamed(dev, stream, a, m, w.k(), image, s, options.rounding, w.arch(), rows))
    return e;
  Error e = launchGemm(dev, stream, *spec, {image}, w, out, m, {*flags});
  if (e)
    if (Error z = dev.fill(*flags, 0, size_t((m + 127) / 128) * size_t(w.k() / 128) * 4, stream))
      return fail(e.message(),
                  "; zeroing the streamed image's flags after it also failed: ", z.message());
  return e;
}

Error gemmA4W4(Device &dev, void *stream, const void *a, int64_t m, const PreparedWeight &w,
               void *out, const GemmA4W4Options &options) {
  if (Error e = checkGemmArgs("gemmA4W4", dev, m, w, out))
    return e;
  if (!a)
    return fail("gemmA4W4: the activation pointer must not be null");
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0)
    return fail("gemmA4W4: the activation pointer must be 16-byte aligned");
  bool dump = options.dumpCodes || options.dumpScales;
  if (dump && !(options.dumpCodes && options.dumpScales))
    return fail("gemmA4W4: the quantization dump needs both dumpCodes and dumpScales");
  GemmA4W4Tile tile = chooseTile(w, m, options);
  if (options.decodeGroups && *options.decodeGroups != 1 && !tile.decode)
    return fail("gemmA4W4: decodeGroups = ", *options.decodeGroups,
                " splits the decode variant's K steps, which this call does not run (M = ", m,
                "); force decode = true too, or leave decodeGroups unset");
  if (tile.splitM != 0 && (tile.splitM % 256 != 0 || tile.splitM >= m || tile.splitM < 0))
    return fail("gemmA4W4: splitM must be a positive multiple of 256 below M = ", m, ", got ",
                tile.splitM);
  if (tile.warpSplitK && tile.preQuantize)
    return fail("gemmA4W4: warpSplitK = ", tile.warpSplitK,
                " quantizes inline; it does not apply with preQuantize");
  const bool image = tile.preQuantize && !dump && options.dequantizeOnce.value_or(true);
  if (options.splitM.value_or(0) != 0 && !image)
    return fail("gemmA4W4: splitM splits the dequantize-once path (qdq_mxfp4 + gemm_qdqa4w4); "
                "it does not apply with inline quantization, a quantization dump or "
                "dequantizeOnce = false");
  if (image) {
    // Quantize and dequantize once; the GEMM's K loop then only moves them.
    Expected<void *> q = w.qdqScratch(m, stream);
    if (!q)
      return q.takeError();
    // The streamed image: BM 128 tiles, one a workgroup, one launch (the
    // table's gives way to other forced variants; forced, it must fit).
    const bool streamable = tile.bm == 128 && tile.splitM == 0 && !tile.persistent &&
                            !tile.streamK && options.quantizerBm.value_or(0) <= 32;
    if (tile.imageStream && !streamable && options.imageStream)
      return fail("gemmA4W4: imageStream streams the activation image to a BM 128 GEMM of one "
                  "tile per workgroup, no split M, after a quantizer of at most 32 rows; this "
                  "call has BM ",
                  tile.bm, tile.persistent ? ", a persistent grid" : "",
                  tile.streamK ? ", stream-K" : "", tile.splitM ? ", a split M" : "");
    if (tile.imageStream < 0 || tile.imageStream > 16)
      return fail("gemmA4W4: imageStream takes 1 to 16 quantizer workgroups per SM (0: off), got ",
                  tile.imageStream);
    if (tile.imageStream && streamable)
      return launchStreamed(dev, stream, a, m, w, out, *q, tile, options);
    if (Error e = qdqMxfp4(dev, stream, a, m, w.k(), *q, options.rounding, w.arch(),
                           options.quantizerBm.value_or(0)))
      return e;
    if (tile.splitM == 0) {
      Expected<KernelSpec> spec = preQuantizedSpec(OpKind::GemmQdqA4W4, w, tile, options);
      if (!spec)
        return spec.takeError();
      return launchGemm(dev, stream, *spec, {*q}, w, out, m, {});
    }
    // Rows [0, splitM) with this tile, the rest with the table's tile for
    // them: a grid of whole waves, then a smaller one (its image rows start
    // at a 256-row pair).
    const int64_t head = tile.splitM;
    GemmA4W4Tile rest = selectGemmA4W4Tile(w.arch(), w.n(), w.k(), m - head);
    rest.preQuantize = true;
    rest.splitM = 0;
    Expected<KernelSpec> first = preQuantizedSpec(OpKind::GemmQdqA4W4, w, tile, options);
    if (!first)
      return first.takeError();
    Expected<KernelSpec> second = preQuantizedSpec(OpKind::GemmQdqA4W4, w, rest, options);
    if (!second)
      return second.takeError();
    if (Error e = launchGemm(dev, stream, *first, {*q}, w, out, head, {}))
      return e;
    void *image = static_cast<uint16_t *>(*q) + sm90::activationImageElements(head, w.k());
    void *outRest = static_cast<uint16_t *>(out) + head * w.n();
    return launchGemm(dev, stream, *second, {image}, w, outRest, m - head, {});
  }
  if (tile.preQuantize) {
    // Quantize once (into the dump buffers when asked: same format), then
    // the GEMM on MXFP4 activations.
    void *codes = options.dumpCodes, *scales = options.dumpScales;
    if (!dump) {
      Expected<std::pair<void *, void *>> scratch = w.activationScratch(m, stream);
      if (!scratch)
        return scratch.takeError();
      std::tie(codes, scales) = *scratch;
    }
    if (Error e =
            quantizeMxfp4(dev, stream, a, m, w.k(), codes, scales, options.rounding, w.arch()))
      return e;
    GemmA4W4Options rest = options;
    rest.dumpCodes = rest.dumpScales = nullptr;
    rest.preQuantize = true;
    return gemmMxA4W4(dev, stream, codes, scales, m, w, out, rest);
  }
  // The table's BM 256 exists on the activation image only: quantizing
  // inline (as forced) takes BM 128.
  const int64_t bm = options.bm ? tile.bm : std::min<int64_t>(tile.bm, 128);
  Expected<KernelSpec> spec = makeGemmA4W4Spec(w.arch(), w.n(), w.k(), bm, options.rounding);
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
  if (Error e = chooseFold(*spec, w, options))
    return e;
  // The table's decode variant gives way where forced options leave a spec
  // it cannot run (uneven splits, too many activations for shared memory,
  // a dump): first its warpgroups splitting K, then the variant; asked for
  // explicitly, verifyKernelSpec below says why.
  if (spec->decode && spec->decodeGroups > 1 && !options.decodeGroups && verifyKernelSpec(*spec))
    spec->decodeGroups = 1;
  if (spec->decode && !options.decode.value_or(false) && !options.decodeGroups &&
      verifyKernelSpec(*spec))
    spec->decode = false;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  std::vector<void *> extra;
  if (dump)
    extra = {options.dumpCodes, options.dumpScales};
  return launchGemm(dev, stream, *spec, {const_cast<void *>(a)}, w, out, m, extra);
}

} // namespace mxfp4
