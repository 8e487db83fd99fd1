//===- GemmA4W4.cpp - The public dense A4W4 GEMM API ----------------------===//

#include "mxfp4/Ops/GemmA4W4.h"
#include "QuantizeMxLaunch.h"
#include "mxfp4/Format/Layout.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/Sm90Geometry.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/PreparedWeightImpl.h"
#include "mxfp4/Ops/QuantizeMx.h"
#include "mxfp4/Support/Checked.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

namespace mxfp4 {

PreparedWeight::PreparedWeight(std::unique_ptr<Impl> impl) : pimpl(std::move(impl)) {}
PreparedWeight::~PreparedWeight() = default;
Arch PreparedWeight::arch() const { return pimpl->arch; }
int64_t PreparedWeight::n() const { return pimpl->n; }
int64_t PreparedWeight::k() const { return pimpl->k; }
bool PreparedWeight::scalesBelow128() const { return pimpl->scalesBelow128; }
Device &PreparedWeight::device() const { return *pimpl->dev; }

PreparedWeight::Impl::~Impl() {
  for (void *p : {data, scales, descriptors})
    dev->free(p);
  for (auto &[stream, s] : scratch)
    for (const RowScratch &r : {s.splitK, s.activations, s.qdq, s.imageFlags}) {
      dev->free(r.first);
      dev->free(r.second);
    }
  for (void *p : retired)
    dev->free(p);
}

Expected<std::pair<void *, void *>>
PreparedWeight::Impl::grow(RowScratch StreamScratch::*which, int64_t m, size_t firstPerRow,
                           size_t secondPerRow, bool zeroed, void *stream, const char *what) const {
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

Expected<std::pair<void *, void *>> PreparedWeight::Impl::activationScratch(int64_t m,
                                                                            void *stream) const {
  return grow(&StreamScratch::activations, m, size_t(k / 2), size_t(k / 32), /*zeroed=*/false,
              stream, "MXFP4 activation");
}

Expected<void *> PreparedWeight::Impl::qdqScratch(int64_t m, void *stream) const {
  Expected<std::pair<void *, void *>> s =
      grow(&StreamScratch::qdq, sm90::activationImageScratchRows(m), size_t(k) * 2, 0,
           /*zeroed=*/false, stream, "activation image");
  if (!s)
    return s.takeError();
  return s->first;
}

Expected<void *> PreparedWeight::Impl::imageFlagsScratch(int64_t m, void *stream) const {
  // One flag per 128-K chunk for every row (a 128-row block's are its first
  // row's): the index math stays the image's.
  Expected<std::pair<void *, void *>> s =
      grow(&StreamScratch::imageFlags, (m + 127) / 128, size_t(k / 128) * 4, 0,
           /*zeroed=*/true, stream, "streamed image flag");
  if (!s)
    return s.takeError();
  return s->first;
}

Expected<std::pair<void *, void *>> PreparedWeight::Impl::splitKScratch(int64_t m, int64_t splits,
                                                                        void *stream,
                                                                        int64_t columns) const {
  // An f32 per output element and split (whole tiles: the weights' padded
  // rows); one i32 counter per output tile is at most one per row and 128
  // columns.
  const int64_t c = columns > 0 ? columns : gemmWeightRows(arch, n);
  return grow(&StreamScratch::splitK, m * splits, size_t(c) * 4, size_t(c / 128 + 1) * 4,
              /*zeroed=*/true, stream, "split-K");
}

template <typename... Parts> static Error fail(const Parts &...parts) {
  return makeError(parts...);
}

/// `rows` x `cols` bytes of `from`, copied into a `toRows` x `toCols`
/// matrix filled with `fill`.
static std::vector<uint8_t> padMatrix(Span<uint8_t> from, int64_t rows, int64_t cols,
                                      int64_t toRows, int64_t toCols, uint8_t fill) {
  std::vector<uint8_t> out(size_t(toRows * toCols), fill);
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(from.data() + r * cols, cols, out.data() + r * toCols);
  return out;
}

/// The TMA descriptors of sm_90a weights and scales, in device memory: with
/// BN 128 boxes, then with BN 64 boxes (Kernels/Sm90Pipeline.h has the
/// views and boxes).
static Expected<void *> sm90Descriptors(Device &dev, void *weights, void *scales, int64_t n,
                                        int64_t k) {
  using namespace sm90;
  const int64_t rows = gemmWeightRows(Arch::SM90A, n);
  const uint64_t chunks = uint64_t(gemmWeightK(Arch::SM90A, k) / 128);
  uint8_t all[4 * kDescriptorBytes];
  for (int64_t bn : {kTileRows, kNarrowTileRows}) {
    Expected<std::array<uint8_t, 128>> w =
        dev.encodeTensorMap(weights, {kTileChunkWords, chunks, uint64_t(rows / 16)},
                            {kTileChunkWords, 1, uint32_t(bn / 16)});
    if (!w)
      return w.takeError();
    Expected<std::array<uint8_t, 128>> s =
        dev.encodeTensorMap(scales, {kGroupScaleWords, chunks, uint64_t(rows / 32)},
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
  // The spec verified N and K, so N * K cannot wrap.
  if (wFp4.size() != size_t(n * k / 2))
    return fail("prepareGemmA4W4Weight: packed weights for N = ", n, ", K = ", k, " are ",
                n * k / 2, " bytes, got ", wFp4.size());
  if (wScale.size() != size_t(n * k / 32))
    return fail("prepareGemmA4W4Weight: weight scales for N = ", n, ", K = ", k, " are ",
                n * k / 32, " bytes, got ", wScale.size());
  // The kernels read whole tiles: zero weights (scale 1.0) past N and K.
  const int64_t rows = gemmWeightRows(arch, n), kw = gemmWeightK(arch, k);
  std::vector<uint8_t> paddedW, paddedS;
  if (rows != n || kw != k) {
    paddedW = padMatrix(wFp4, n, k / 2, rows, kw / 2, 0);
    paddedS = padMatrix(wScale, n, k / 32, rows, kw / 32, 0x7F);
    wFp4 = Span<uint8_t>(paddedW.data(), paddedW.size());
    wScale = Span<uint8_t>(paddedS.data(), paddedS.size());
  }
  Expected<std::vector<uint8_t>> w = shuffleWeight(spec->weightLayout, wFp4, rows, kw / 2);
  if (!w)
    return w.takeError();
  Expected<std::vector<uint8_t>> s = shuffleScales(spec->scaleLayout, wScale, rows, kw / 32);
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
  auto impl = std::make_unique<PreparedWeight::Impl>(dev, arch, n, k, *dw, *ds);
  if (Error e = dev.copyToDevice(*dw, w->data(), w->size()))
    return e;
  if (Error e = dev.copyToDevice(*ds, s->data(), s->size()))
    return e;
  if (arch == Arch::SM90A) {
    Expected<void *> dd = sm90Descriptors(dev, *dw, *ds, n, k);
    if (!dd)
      return dd.takeError();
    impl->descriptors = *dd;
  }
  impl->scalesBelow128 =
      std::all_of(wScale.begin(), wScale.end(), [](uint8_t s) { return s < 128; });
  return std::make_unique<PreparedWeight>(std::move(impl));
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
  if (!productBelow({m, w.n()}, kIndex32Limit) || !productBelow({m, w.k() / 8}, int64_t(1) << 27))
    return fail(api, ": M = ", m,
                " is too large for 32-bit indexing (M * N must be < 2^31 and M * K < 2^30)");
  return Error::success();
}

/// Launches a GEMM of `call`: `front` (the activation arguments), then W,
/// its scales, C, M, the extra arguments and the split-K scratch.
static Error launchGemm(Device &dev, void *stream, const ResolvedLaunch &call,
                        std::initializer_list<void *> front, const PreparedWeight &w, void *out,
                        int64_t m, std::initializer_list<void *> extra = {}) {
  const KernelSpec &spec = call.kernel->spec;
  void *ws = nullptr, *counters = nullptr;
  // Clustered splits (Sm90Pipeline.h) sum in shared memory, no global scratch.
  const bool scratch = spec.splitK > 1 && !(spec.arch == Arch::SM90A &&
                                            sm90::clusterSplitK(spec.bm, spec.splitK, spec.bn));
  // Whole M tiles: sm_90a stores each workgroup's tile as its threads hold it.
  const int64_t tileRows = (m + spec.bm - 1) / spec.bm * spec.bm;
  // AMD kernels index the split-K workspace ([splits, M, N] f32) with 32 bits.
  if (scratch && spec.arch != Arch::SM90A &&
      !productBelow({spec.splitK, tileRows, gemmWeightRows(spec.arch, w.n())}, kIndex32Limit))
    return makeError("gemmA4W4: split-K ", spec.splitK, " at M = ", m, ", N = ", w.n(),
                     " needs a workspace past 32-bit indexing on ", toString(spec.arch),
                     "; use fewer splits or a smaller M");
  if (scratch) {
    Expected<std::pair<void *, void *>> scratch =
        w.impl().splitKScratch(tileRows, spec.splitK, stream);
    if (!scratch)
      return scratch.takeError();
    std::tie(ws, counters) = *scratch;
  }
  if (spec.streamK) {
    // Two partial tiles per launched workgroup, a counter per tile (the
    // split-K scratch of enough rows holds both).
    const int64_t groups = launchedGridX(call.geometry, dev.multiprocessorCount());
    const int64_t rowBytes = w.n() * 4;
    const int64_t rows = std::max(tileRows, (streamKWorkspaceBytes(spec, groups) + rowBytes - 1) /
                                                rowBytes);
    Expected<std::pair<void *, void *>> scratch = w.impl().splitKScratch(rows, 1, stream);
    if (!scratch)
      return scratch.takeError();
    std::tie(ws, counters) = *scratch;
  }
  // Arguments in the kernel's order (Kernels/GemmA4W4.h).
  constexpr size_t kMaxValues = 12;
  void *values[kMaxValues];
  void *args[kMaxValues + 1];
  size_t n = 0;
  auto pass = [&](void *p) {
    values[n] = p;
    args[n] = &values[n];
    ++n;
  };
  for (void *p : front)
    pass(p);
  pass(w.impl().data);
  pass(w.impl().scales);
  if (spec.arch == Arch::SM90A)
    pass(w.impl().descriptors);
  pass(out);
  int32_t m32 = int32_t(m);
  args[n] = &m32;
  values[n++] = nullptr;
  for (void *p : extra)
    pass(p);
  if (spec.splitK > 1 || spec.streamK) {
    pass(ws);
    pass(counters);
  }
  return dev.launch(*call.kernel, call.geometry, args, stream);
}

/// The facts of `w` dispatch decides on.
static GemmWeightFacts factsOf(const PreparedWeight &w) {
  return {w.arch(), w.n(), w.k(), w.scalesBelow128(), w.device().multiprocessorCount()};
}

/// `plan`'s kernels from the JIT with their geometry for M rows.
static Expected<std::unique_ptr<const ResolvedGemm>>
resolvePlan(Device &dev, const GemmA4W4Plan &plan, int64_t m) {
  auto r = std::make_unique<ResolvedGemm>();
  r->path = plan.path;
  r->splitM = plan.splitM;
  r->streamWorkgroupsPerSm = plan.streamWorkgroupsPerSm;
  if (plan.quantizer) {
    Expected<std::shared_ptr<const CompiledKernel>> q = Jit::global().get(*plan.quantizer);
    if (!q)
      return q.takeError();
    r->quantizer = ResolvedLaunch{*q, (*q)->geometry(m)};
  }
  // Rows [0, splitM) by the first GEMM, the rest by the second.
  const int64_t rows[2] = {plan.splitM ? plan.splitM : m, m - plan.splitM};
  for (size_t i = 0; i < plan.gemms.size(); ++i) {
    Expected<std::shared_ptr<const CompiledKernel>> g = Jit::global().get(plan.gemms[i]);
    if (!g)
      return g.takeError();
    ResolvedLaunch call{*g, (*g)->geometry(rows[i])};
    if (plan.gemms[i].streamK) {
      // The kernel's index math is 32-bit: iterations x workgroups must
      // stay below 2^31.
      const int64_t iterations = streamKIterations(plan.gemms[i], rows[i]);
      const int64_t groups = launchedGridX(call.geometry, dev.multiprocessorCount());
      if (iterations * groups >= (int64_t(1) << 31))
        return fail("gemmA4W4: stream-K over ", iterations, " iterations and ", groups,
                    " workgroups exceeds its 32-bit index math; use another tile");
    }
    r->gemms.push_back(std::move(call));
  }
  return std::unique_ptr<const ResolvedGemm>(std::move(r));
}

const ResolvedGemm *PreparedWeight::Impl::resolved(uint64_t key) const {
  std::lock_guard<std::mutex> lock(resolvedMutex);
  auto it = resolvedCalls.find(key);
  return it == resolvedCalls.end() ? nullptr : it->second.get();
}

const ResolvedGemm *PreparedWeight::Impl::remember(uint64_t key,
                                                   std::unique_ptr<const ResolvedGemm> &r) const {
  std::lock_guard<std::mutex> lock(resolvedMutex);
  if (auto it = resolvedCalls.find(key); it != resolvedCalls.end())
    return it->second.get();
  if (resolvedCalls.size() >= kMaxResolved)
    return r.get();
  const ResolvedGemm *kept = r.get();
  resolvedCalls.emplace(key, std::move(r));
  return kept;
}

/// The launches of a call: remembered ones where dispatch would plan the
/// same again (no overrides, no dump: then only M, the rounding and the
/// entry point decide), else planned now and owned by `fresh`.
static Expected<const ResolvedGemm *> launchesFor(Device &dev, const PreparedWeight &w, int64_t m,
                                                  const GemmA4W4Options &options, bool mx,
                                                  std::unique_ptr<const ResolvedGemm> &fresh) {
  const bool reusable = !options.overrides.any() && !options.dumpCodes && !options.dumpScales;
  // M < 2^31 (checkGemmArgs).
  const uint64_t key = uint64_t(m) | uint64_t(options.rounding) << 32 | uint64_t(mx ? 1 : 0) << 40;
  if (reusable)
    if (const ResolvedGemm *r = w.impl().resolved(key))
      return r;
  Expected<GemmA4W4Plan> plan = planGemmA4W4(factsOf(w), m, options, mx);
  if (!plan)
    return plan.takeError();
  Expected<std::unique_ptr<const ResolvedGemm>> r = resolvePlan(dev, *plan, m);
  if (!r)
    return r.takeError();
  fresh = std::move(*r);
  if (!reusable)
    return fresh.get();
  return w.impl().remember(key, fresh);
}

Error gemmMxA4W4(Device &dev, void *stream, const void *aCodes, const void *aScales, int64_t m,
                 const PreparedWeight &w, void *out, const GemmA4W4Options &options) {
  if (Error e = checkGemmArgs("gemmMxA4W4", dev, m, w, out))
    return e;
  if (!aCodes || !aScales)
    return fail("gemmMxA4W4: the activation codes and scales pointers must not be null");
  if (reinterpret_cast<uintptr_t>(aCodes) % 4 != 0)
    return fail("gemmMxA4W4: the activation codes pointer must be 4-byte aligned");
  std::unique_ptr<const ResolvedGemm> fresh;
  Expected<const ResolvedGemm *> r = launchesFor(dev, w, m, options, /*mx=*/true, fresh);
  if (!r)
    return r.takeError();
  return launchGemm(dev, stream, (*r)->gemms[0],
                    {const_cast<void *>(aCodes), const_cast<void *>(aScales)}, w, out, m);
}

/// The streamed image (Schedule::imageStream): qdq_mxfp4 publishing its
/// pieces, and the GEMM launched as its dependent copying each once it is
/// in. A failed GEMM launch zeroes the flags the quantizer counted into.
static Error launchStreamed(Device &dev, void *stream, const void *a, int64_t m,
                            const PreparedWeight &w, void *out, void *image,
                            const ResolvedGemm &r) {
  Expected<void *> flags = w.impl().imageFlagsScratch(m, stream);
  if (!flags)
    return flags.takeError();
  ImageStream s;
  s.flags = *flags;
  s.splits = r.quantizer->kernel->spec.imageStream;
  s.workgroupsPerSm = r.streamWorkgroupsPerSm;
  if (Error e = launchQuantizerKernel("qdqMxfp4Streamed", dev, stream, *r.quantizer->kernel,
                                      r.quantizer->geometry, a, m, {image}, &s))
    return e;
  Error e = launchGemm(dev, stream, r.gemms[0], {image}, w, out, m, {*flags});
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
  std::unique_ptr<const ResolvedGemm> fresh;
  Expected<const ResolvedGemm *> resolved = launchesFor(dev, w, m, options, /*mx=*/false, fresh);
  if (!resolved)
    return resolved.takeError();
  const ResolvedGemm &r = **resolved;
  using Path = GemmA4W4Plan::Path;
  switch (r.path) {
  case Path::Inline:
    if (options.dumpCodes)
      return launchGemm(dev, stream, r.gemms[0], {const_cast<void *>(a)}, w, out, m,
                        {options.dumpCodes, options.dumpScales});
    return launchGemm(dev, stream, r.gemms[0], {const_cast<void *>(a)}, w, out, m);
  case Path::MxActivations: {
    // Quantize once (into the dump buffers when asked: same format), then
    // the GEMM on MXFP4 activations.
    void *codes = options.dumpCodes, *scales = options.dumpScales;
    if (!codes) {
      Expected<std::pair<void *, void *>> scratch = w.impl().activationScratch(m, stream);
      if (!scratch)
        return scratch.takeError();
      std::tie(codes, scales) = *scratch;
    }
    if (Error e = launchQuantizerKernel("quantizeMxfp4", dev, stream, *r.quantizer->kernel,
                                        r.quantizer->geometry, a, m, {codes, scales}))
      return e;
    return launchGemm(dev, stream, r.gemms[0], {codes, scales}, w, out, m);
  }
  case Path::Image:
  case Path::StreamedImage:
    break;
  }
  // Quantize and dequantize once; the GEMM's K loop then only moves them.
  Expected<void *> q = w.impl().qdqScratch(m, stream);
  if (!q)
    return q.takeError();
  if (r.path == Path::StreamedImage)
    return launchStreamed(dev, stream, a, m, w, out, *q, r);
  if (Error e = launchQuantizerKernel("qdqMxfp4", dev, stream, *r.quantizer->kernel,
                                      r.quantizer->geometry, a, m, {*q}))
    return e;
  if (r.gemms.size() == 1)
    return launchGemm(dev, stream, r.gemms[0], {*q}, w, out, m);
  // Rows [0, splitM) by the first GEMM, the rest by the second on the image
  // from row splitM (a 256-row pair) on.
  const int64_t head = r.splitM;
  if (Error e = launchGemm(dev, stream, r.gemms[0], {*q}, w, out, head))
    return e;
  void *image = static_cast<uint16_t *>(*q) + sm90::activationImageElements(head, w.k());
  void *outRest = static_cast<uint16_t *>(out) + head * w.n();
  return launchGemm(dev, stream, r.gemms[1], {image}, w, outRest, m - head);
}

} // namespace mxfp4
