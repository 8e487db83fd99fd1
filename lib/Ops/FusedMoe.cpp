//===- FusedMoe.cpp - The A4W4 mixture of experts -------------------------===//

#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/MoeSpecs.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/MoeSort.h"
#include "mxfp4/Ops/PreparedWeightImpl.h"
#include "mxfp4/Ops/TunedCsv.h"
#include "mxfp4/Support/Log.h"
#include "mxfp4/Support/StrCat.h"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

namespace mxfp4 {

namespace {

template <typename... Parts> Error fail(const Parts &...parts) { return makeError(parts...); }

/// The scratch of one call: sorting outputs and the intermediates, carved
/// from one buffer (256-byte aligned pieces).
struct ScratchLayout {
  enum Piece {
    SortedIds,
    SortedWeights,
    ExpertIds,
    NumValid,
    Status,
    Positions,
    Workspace,
    A1Codes,
    A1Scales,
    GateUp,
    A2Codes,
    A2Scales,
    Y,
    Acc,
    kPieces
  };
  size_t offset[kPieces] = {};
  size_t total = 0;

  ScratchLayout() = default;
  /// `sortExperts`: the experts the routing ids index (with a mask, the
  /// global ones); `bf16GateUp`: stage 1 is not fused (moe_gemm stores
  /// its gate/up rows); `atomic`: stage 2 adds into an f32 accumulator
  /// instead of storing per-slot rows.
  ScratchLayout(Arch arch, const MoeShape &s, int64_t tokens, int64_t blockM, int64_t sortExperts,
                bool bf16GateUp, bool atomic) {
    const MoeSortSizes sort = moeSortSizes(tokens, s.topk, sortExperts, blockM);
    const int64_t rows = moeMaxRows(s, tokens, blockM);
    // Scales in gfx1250's layout come in tiles of 16 R rows.
    const int64_t tile = 16 * moeScaleRep(arch, blockM);
    const int64_t scaleRows = (rows + tile - 1) / tile * tile;
    const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
    const int64_t bytes[kPieces] = {sort.paddedEntries * 4,
                                    sort.paddedEntries * 4,
                                    sort.blocks * 4,
                                    8,
                                    4,
                                    tokens * s.topk * 4,
                                    moeSortWorkspaceBytes({tokens, s.topk, sortExperts, blockM}),
                                    rows * hp / 2,
                                    scaleRows * hp / 32,
                                    bf16GateUp ? rows * 2 * ip * 2 : 0,
                                    rows * ip / 2,
                                    scaleRows * ip / 32,
                                    atomic ? 0 : rows * hp * 2,
                                    atomic ? tokens * hp * 4 : 0};
    for (int i = 0; i < kPieces; ++i) {
      offset[i] = total;
      total += (size_t(bytes[i]) + 255) / 256 * 256;
    }
  }
};

} // namespace

struct MoeWeights::Impl {
  Impl(Device &dev, Arch arch, MoeShape shape, std::unique_ptr<PreparedWeight> w1,
       std::unique_ptr<PreparedWeight> w2)
      : dev(&dev), arch(arch), shape(shape), w1(std::move(w1)), w2(std::move(w2)) {}
  ~Impl() {
    for (void *p : {bias1, bias2})
      if (p)
        dev->free(p);
    for (auto &[stream, p] : scratch)
      dev->free(p.first);
    for (void *p : retired)
      dev->free(p);
  }

  /// `stream`'s scratch of at least `bytes`, grown (at least doubling) on
  /// demand; replaced buffers stay allocated until the weights go (queued
  /// or captured work may still use them).
  Expected<char *> scratchFor(size_t bytes, void *stream) const {
    std::lock_guard<std::mutex> lock(mutex);
    std::pair<void *, size_t> &s = scratch[stream];
    if (bytes <= s.second)
      return static_cast<char *>(s.first);
    Expected<bool> capturing = dev->capturing(stream);
    if (!capturing)
      return capturing.takeError();
    if (*capturing)
      return fail("fusedMoeA4W4: this call needs ", bytes,
                  " bytes of scratch and the stream's "
                  "holds ",
                  s.second,
                  "; growing it allocates device memory, which cannot happen while the "
                  "stream is captured into a graph. Run a call with at least as many tokens "
                  "once on this stream before capturing");
    const size_t want = std::max(bytes, s.second * 2);
    Expected<void *> p = dev->alloc(want);
    if (!p)
      return p.takeError();
    if (s.first)
      retired.push_back(s.first);
    s = {*p, want};
    return static_cast<char *>(s.first);
  }

  /// Whether `stream`'s split-K scratch has not been reserved for calls of
  /// up to `tokens` tokens yet; records it as reserved.
  bool raiseSplitKReservation(void *stream, int64_t tokens) const {
    std::lock_guard<std::mutex> lock(mutex);
    int64_t &reserved = splitKReserved[stream];
    if (tokens <= reserved)
      return false;
    reserved = tokens;
    return true;
  }

  Device *dev;
  Arch arch;
  MoeShape shape;
  /// W1 as one [E * 2 Ip, Hp] matrix (expert e's rows from 2 Ip e, gate and
  /// up rows paired in groups of 16: 8 gate rows, then the same columns' up
  /// rows), W2 as [E * Hp, Ip]; zero padded.
  std::unique_ptr<PreparedWeight> w1, w2;
  /// The biases (null: none): W1's [E, 2 Ip] f32 in the prepared rows'
  /// order, W2's [E, H] f32.
  float *bias1 = nullptr, *bias2 = nullptr;

private:
  mutable std::mutex mutex;
  mutable std::unordered_map<void *, std::pair<void *, size_t>> scratch;
  mutable std::vector<void *> retired;
  mutable std::unordered_map<void *, int64_t> splitKReserved;
};

MoeWeights::MoeWeights(std::unique_ptr<Impl> impl) : pimpl(std::move(impl)) {}
MoeWeights::~MoeWeights() = default;
const MoeShape &MoeWeights::shape() const { return pimpl->shape; }
Arch MoeWeights::arch() const { return pimpl->arch; }

Error checkMoeShape(const MoeShape &s) {
  if (s.experts < 1 || s.experts > 65536)
    return fail("MoE: E must be in [1, 65536], got ", s.experts);
  if (s.topk < 1 || s.topk > std::min<int64_t>(s.experts, 255))
    return fail("MoE: topk must be in [1, min(E, 255)] = [1, ", std::min<int64_t>(s.experts, 255),
                "], got ", s.topk);
  if (s.hidden < 32 || s.hidden % 32 != 0)
    return fail("MoE: the hidden size must be a positive multiple of 32 (the MXFP4 block), got ",
                s.hidden);
  if (s.inter < 32 || s.inter % 32 != 0)
    return fail("MoE: inter must be a positive multiple of 32 (the MXFP4 block), got ", s.inter);
  return Error::success();
}

int64_t moeBlockM(Arch arch, const MoeShape &shape, int64_t tokens, const FusedMoeOptions &options,
                  int64_t computeUnits) {
  if (options.blockM)
    return options.blockM;
  // fusedMoeA4W4 reports a table that failed to load (checkCall).
  if (Expected<const TunedTable *> tuned = processTunedTable()) {
    const TunedKey key = moeTunedKey(arch, shape, options.activation.kind, computeUnits);
    if (const TunedRow *row = (*tuned)->find(key, tokens))
      return row->kernels.front().bm;
  } else {
    (void)tuned.takeError();
  }
  return moeDefaultBlockM(arch, shape, tokens);
}

TunedKey moeTunedKey(Arch arch, const MoeShape &shape, Activation activation,
                     int64_t computeUnits) {
  TunedKey key;
  key.arch = arch;
  key.computeUnits = computeUnits;
  key.op = TunedOp::FusedMoe;
  key.n = shape.inter;
  key.k = shape.hidden;
  key.experts = shape.experts;
  key.topk = shape.topk;
  key.activation = activation;
  return key;
}

int64_t moeDefaultBlockM(Arch arch, const MoeShape &shape, int64_t tokens) {
  // The rows an active expert gets on average: the M tile that holds them
  // with the least padding.
  const int64_t entries = tokens * shape.topk;
  const int64_t perExpert =
      (entries + std::min(entries, shape.experts) - 1) / std::min(entries, shape.experts);
  const int64_t bm = perExpert <= 16 ? 16 : perExpert <= 32 ? 32 : perExpert <= 96 ? 64 : 128;
  return std::min(bm, targetInfo(arch).maxMoeBlockM);
}

int64_t moeMaxRows(const MoeShape &shape, int64_t tokens, int64_t blockM) {
  const int64_t entries = tokens * shape.topk;
  const int64_t active = std::min(entries, shape.experts);
  const int64_t bound = (entries + active * (blockM - 1) + blockM - 1) / blockM * blockM;
  return std::min(bound, moeSortSizes(tokens, shape.topk, shape.experts, blockM).paddedEntries);
}

Expected<std::unique_ptr<MoeWeights>>
prepareMoeWeights(Device &dev, const MoeShape &s, Span<uint8_t> w1Fp4, Span<uint8_t> w1Scale,
                  Span<uint8_t> w2Fp4, Span<uint8_t> w2Scale, GateUpLayout layout,
                  std::optional<Arch> archOpt, const MoeBiases &biases) {
  if (Error e = checkMoeShape(s))
    return e;
  Expected<Arch> arch = archOpt ? Expected<Arch>(*archOpt) : targetArch(&dev);
  if (!arch)
    return arch.takeError();
  // The weights live on `dev` and its kernels run them: another target's
  // layout there could only fail at the first launch.
  if (*arch != dev.arch())
    return fail("prepareMoeWeights: weights for ", toString(*arch),
                " cannot run on this device, which is ", toString(dev.arch()),
                "; prepare them for its target");
  const int64_t e = s.experts, h = s.hidden, in = s.inter;
  const int64_t hp = moePaddedRow(*arch, h), ip = moePaddedRow(*arch, in);
  auto expect = [&](const char *what, Span<uint8_t> got, int64_t want) {
    return got.size() == size_t(want)
               ? Error::success()
               : fail("prepareMoeWeights: ", what, " for E = ", e, ", H = ", h, ", inter = ", in,
                      " are ", want, " bytes, got ", got.size());
  };
  if (Error err = expect("W1's packed codes [E, 2 inter, H/2]", w1Fp4, e * 2 * in * h / 2))
    return err;
  if (Error err = expect("W1's scales [E, 2 inter, H/32]", w1Scale, e * 2 * in * h / 32))
    return err;
  if (Error err = expect("W2's packed codes [E, H, inter/2]", w2Fp4, e * h * in / 2))
    return err;
  if (Error err = expect("W2's scales [E, H, inter/32]", w2Scale, e * h * in / 32))
    return err;
  auto expectBias = [&](const char *what, Span<float> got, int64_t want) {
    return got.size() == 0 || got.size() == size_t(want)
               ? Error::success()
               : fail("prepareMoeWeights: ", what, " for E = ", e, ", H = ", h, ", inter = ", in,
                      " has ", want, " elements (or none), got ", got.size());
  };
  if (Error err = expectBias("W1's bias [E, 2 inter]", biases.w1, e * 2 * in))
    return err;
  if (Error err = expectBias("W2's bias [E, H]", biases.w2, e * h))
    return err;
  // Rows copied into zero-padded matrices (scale 0x7F = 1.0 on the padding).
  auto pad = [](Span<uint8_t> from, int64_t rows, int64_t fromRow, int64_t toRow, uint8_t fill,
                auto rowOf) {
    std::vector<uint8_t> to(size_t(rows * toRow), fill);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t src = rowOf(r);
      if (src >= 0)
        std::copy_n(from.data() + src * fromRow, fromRow, to.data() + r * toRow);
    }
    return to;
  };
  // W1's row r of the padded [E * 2 Ip] rows: expert x, then gate and up
  // rows paired in groups of 16 (rows 16q..16q+7 gate rows 8q.., the next 8
  // their up rows; mxtile.store_act_mx), index i < inter, or padding (-1).
  auto w1Row = [&](int64_t r) -> int64_t {
    const int64_t x = r / (2 * ip), local = r % (2 * ip);
    const int64_t half = (local % 16) / 8, i = (local / 16) * 8 + local % 8;
    if (i >= in)
      return -1;
    const int64_t from =
        layout == GateUpLayout::Gguu ? half * in + i : (i / 16) * 32 + half * 16 + i % 16;
    return x * 2 * in + from;
  };
  auto w2Row = [&](int64_t r) -> int64_t {
    const int64_t x = r / hp, i = r % hp;
    return i < h ? x * h + i : -1;
  };
  if (layout == GateUpLayout::Gugu && in % 16 != 0)
    return fail("prepareMoeWeights: the interleaved layout takes 16-row tiles; inter ", in);
  std::vector<uint8_t> w1 = pad(w1Fp4, e * 2 * ip, h / 2, hp / 2, 0, w1Row);
  std::vector<uint8_t> s1 = pad(w1Scale, e * 2 * ip, h / 32, hp / 32, 0x7F, w1Row);
  // Zero-padded columns beyond K: copy_n fills the first fromRow bytes.
  Expected<std::unique_ptr<PreparedWeight>> p1 =
      prepareGemmA4W4Weight(dev, w1, s1, e * 2 * ip, hp, *arch);
  if (!p1)
    return p1.takeError();
  w1 = {};
  s1 = {};
  std::vector<uint8_t> w2 = pad(w2Fp4, e * hp, in / 2, ip / 2, 0, w2Row);
  std::vector<uint8_t> s2 = pad(w2Scale, e * hp, in / 32, ip / 32, 0x7F, w2Row);
  Expected<std::unique_ptr<PreparedWeight>> p2 =
      prepareGemmA4W4Weight(dev, w2, s2, e * hp, ip, *arch);
  if (!p2)
    return p2.takeError();
  auto impl = std::make_unique<MoeWeights::Impl>(dev, *arch, s, std::move(*p1), std::move(*p2));
  // The biases: W1's in the prepared rows' order (zero on padding), W2's
  // as given.
  auto upload = [&](const std::vector<float> &v, float *&to) -> Error {
    Expected<void *> p = dev.alloc(v.size() * 4);
    if (!p)
      return p.takeError();
    to = static_cast<float *>(*p);
    return dev.copyToDevice(to, v.data(), v.size() * 4);
  };
  if (biases.w1.size()) {
    std::vector<float> b1(size_t(e * 2 * ip), 0.0f);
    for (int64_t r = 0; r < e * 2 * ip; ++r)
      if (const int64_t src = w1Row(r); src >= 0)
        b1[size_t(r)] = biases.w1.data()[src];
    if (Error err = upload(b1, impl->bias1))
      return err;
  }
  if (biases.w2.size())
    if (Error err = upload(
            std::vector<float>(biases.w2.data(), biases.w2.data() + biases.w2.size()), impl->bias2))
      return err;
  return std::make_unique<MoeWeights>(std::move(impl));
}

namespace {

/// The fused activation epilogue's outputs and run-time arguments.
struct ActMxArgs {
  void *codes, *scales;
  const float *sortedWeights;
  float *debug; // nullable
  MoeActivation activation;
  bool doweight;
  int32_t inter;
};

/// The scatter epilogue's run-time arguments.
struct ScatterArgs {
  float *acc; // [tokens, Hp] f32, zero before the launch
  const int32_t *sortedIds;
  const float *sortedWeights;
  const float *bias; // nullable: W2's [E, H]
  bool useWeights;
  int32_t tokens, hidden;
};

/// The bf16 epilogue's output: C [rows, N].
struct Bf16Out {
  void *c;
};

/// What moe_gemm's epilogue writes, by its kind (KernelSpec::epilogue).
using MoeGemmOut = std::variant<Bf16Out, ActMxArgs, ScatterArgs>;

/// moe_gemm `spec` (makeMoeGemmSpec's, or with a fused epilogue: stage 1's
/// activation quantized, ActMxArgs; stage 2's rows scattered,
/// ScatterArgs): A (MXFP4, sorted rows) times the expert's N rows of `w`,
/// for the row blocks `sorted` says hold rows, into `out`.
Error launchMoeGemm(Device &dev, void *stream, const KernelSpec &spec, const PreparedWeight &w,
                    const void *codes, const void *scales, const MoeSorted &sorted, int64_t maxRows,
                    int64_t tokens, const MoeGemmOut &output) {
  const auto *actMx = std::get_if<ActMxArgs>(&output);
  const auto *scatter = std::get_if<ScatterArgs>(&output);
  void *out = std::holds_alternative<Bf16Out>(output) ? std::get<Bf16Out>(output).c : nullptr;
  if (bool(actMx) != storesActMx(spec.epilogue) ||
      bool(scatter) != (spec.epilogue == Epilogue::Scatter))
    return fail("moe_gemm ", spec.name(), ": the arguments given are not its epilogue's");
  // Split-K's partial tiles (an f32 tile per split of each of the grid's
  // maxRows / BM x N / BN tiles) and a counter per tile; the scatter
  // epilogue's splits add theirs on their own.
  void *workspace = nullptr, *counters = nullptr;
  if (spec.splitK > 1 && !scatter) {
    Expected<std::pair<void *, void *>> reserved =
        w.impl().splitKScratch(maxRows, spec.splitK, stream, spec.n);
    // Under graph capture the scratch cannot grow, and calls with more
    // tokens may split less or not at all: their scratch need not cover
    // this one.
    if (!reserved) {
      Expected<bool> capturing = dev.capturing(stream);
      if (!capturing || !*capturing)
        return reserved.takeError();
      return fail("moe_gemm splits K in ", spec.splitK, " at ", tokens,
                  " tokens: ", reserved.takeError().message(), ". Run a call with at least ",
                  tokens,
                  " tokens on this stream before capturing (it reserves the scratch of "
                  "every smaller call)");
    }
    std::tie(workspace, counters) = *reserved;
  }
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(spec);
  if (!kernel)
    return kernel.takeError();
  const PreparedWeight::Impl &wi = w.impl();
  void *a = const_cast<void *>(codes), *as = const_cast<void *>(scales), *wd = wi.data,
       *ws = wi.scales, *desc = wi.descriptors, *groups = const_cast<int32_t *>(sorted.expertIds),
       *valid = const_cast<int32_t *>(sorted.numValid);
  // Arguments in the kernel's order (Kernels/GemmA4W4.cpp): sm_90a's TMA
  // descriptors follow the scales.
  std::vector<void *> args{&a, &as, &wd, &ws};
  if (spec.arch == Arch::SM90A)
    args.push_back(&desc);
  void *actCodes = actMx ? actMx->codes : nullptr, *actScales = actMx ? actMx->scales : nullptr,
       *rowWeights = actMx ? const_cast<float *>(actMx->sortedWeights) : nullptr,
       *debug = actMx ? actMx->debug : nullptr;
  float p0 = actMx ? actMx->activation.p0 : 0.0f, p1 = actMx ? actMx->activation.p1 : 0.0f;
  int32_t doweight = actMx && actMx->doweight, inter = actMx ? actMx->inter : 0;
  void *acc = scatter ? scatter->acc : nullptr,
       *ids = scatter ? const_cast<int32_t *>(scatter->sortedIds) : nullptr,
       *idWeights = scatter ? const_cast<float *>(scatter->sortedWeights) : nullptr,
       *bias = scatter ? const_cast<float *>(scatter->bias) : nullptr;
  int32_t scatterTokens = scatter ? scatter->tokens : 0,
          useWeights = scatter && scatter->useWeights, hidden = scatter ? scatter->hidden : 0,
          hasBias = bias != nullptr;
  if (actMx) {
    args.push_back(&actCodes);
    args.push_back(&actScales);
  } else if (scatter) {
    args.push_back(&acc);
  } else {
    args.push_back(&out);
  }
  args.push_back(&groups);
  args.push_back(&valid);
  if (actMx) {
    args.push_back(&rowWeights);
    if (spec.epilogue == Epilogue::ActMxDebug)
      args.push_back(&debug);
  }
  if (scatter)
    for (void **p : {&ids, &idWeights, &bias})
      args.push_back(p);
  if (workspace) {
    args.push_back(&workspace);
    args.push_back(&counters);
  }
  if (actMx)
    for (void *p : {(void *)&p0, (void *)&p1, (void *)&doweight, (void *)&inter})
      args.push_back(p);
  if (scatter)
    for (int32_t *p : {&scatterTokens, &useWeights, &hidden, &hasBias})
      args.push_back(p);
  return dev.launch(**kernel, (*kernel)->geometry(maxRows), args.data(), stream);
}

/// Outside graph capture, grows `stream`'s split-K scratch of both GEMMs to
/// what any call of at most `tokens` tokens needs: fewer tokens fill fewer
/// row blocks and may split K where more did not, and engines warm up at
/// their largest batch and then capture smaller ones (where the scratch
/// cannot grow). Once per stream and token high-water mark, for both
/// GEMMs whatever the call's MoeCombine (a later call on the stream may
/// take the other).
Error reserveSplitKScratch(Device &dev, const MoeWeights &w, int64_t tokens,
                           const FusedMoeOptions &o, void *stream) {
  const Arch arch = w.arch();
  const TargetInfo &target = targetInfo(arch);
  if (target.moeSplitKWorkgroups == 0)
    return Error::success();
  Expected<bool> capturing = dev.capturing(stream);
  if (!capturing)
    return capturing.takeError();
  if (*capturing || !w.impl().raiseSplitKReservation(stream, tokens))
    return Error::success();
  const MoeShape &s = w.shape();
  const PreparedWeight *weights[] = {w.impl().w1.get(), w.impl().w2.get()};
  const int64_t columns[] = {2 * moePaddedRow(arch, s.inter), moePaddedRow(arch, s.hidden)};
  for (int64_t t = 1; t <= tokens; ++t) {
    const int64_t bm = moeBlockM(arch, s, t, o, dev.multiprocessorCount());
    const int64_t blocks = moeExpectedBlocks(t, s.topk, s.experts, bm);
    for (int i = 0; i < 2; ++i) {
      Expected<KernelSpec> spec = makeMoeGemmSpec(arch, columns[i], weights[i]->k(), bm, blocks,
                                                  weights[i]->scalesBelow128());
      if (!spec)
        return spec.takeError();
      if (spec->splitK > 1)
        if (Expected<std::pair<void *, void *>> r = weights[i]->impl().splitKScratch(
                moeMaxRows(s, t, bm), spec->splitK, stream, columns[i]);
            !r)
          return r.takeError();
    }
    // Every later count fills at least its active experts' blocks: once
    // those cover the workgroups K splits aim for, nothing splits.
    const int64_t active = std::min(t * s.topk, s.experts);
    if (active * std::min(columns[0], columns[1]) / target.defaultBn >= target.moeSplitKWorkgroups)
      break;
  }
  return Error::success();
}

Error checkCall(const char *api, Device &dev, const MoeWeights &w, int64_t tokens,
                const FusedMoeOptions &options) {
  if (&dev != &w.impl().w1->device())
    return fail(api, ": the weights were prepared on another device");
  if (tokens < 1 || tokens >= (int64_t(1) << 24))
    return fail(api, ": tokens must be in [1, 2^24), got ", tokens);
  const int64_t bm = options.blockM;
  if (bm != 0 && bm != 16 && bm != 32 && bm != 64 && bm != 128)
    return fail(api, ": blockM must be 0 (dispatch picks), 16, 32, 64 or 128, got ", bm);
  if (options.expertMask && options.globalExperts < w.shape().experts)
    return fail(api, ": with an expert mask, globalExperts (", options.globalExperts,
                ") must be at least the weights' E (", w.shape().experts, ")");
  if (!options.expertMask && options.globalExperts && options.globalExperts != w.shape().experts)
    return fail(api, ": globalExperts (", options.globalExperts,
                ") without an expert mask must be the weights' E (", w.shape().experts, ")");
  if (options.combine != MoeCombine::Reduce && options.combine != MoeCombine::Atomic)
    return fail(api, ": combine must be MoeCombine::Reduce or MoeCombine::Atomic, got ",
                int(options.combine));
  if (Error e = checkMoeActivation(options.activation))
    return fail(api, ": ", e.message());
  if (Expected<const TunedTable *> tuned = processTunedTable(); !tuned)
    return fail(api, ": ", tuned.takeError().message());
  return Error::success();
}

int64_t sortExperts(const MoeWeights &w, const FusedMoeOptions &o) {
  return o.expertMask ? o.globalExperts : w.shape().experts;
}

bool aligned(const void *p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

/// What one public call runs, decided once: each stage's moe_gemm (stage
/// 1's with the fused activation epilogue or not, stage 2's scattering
/// atomically or not, and why a variant does not apply), the scratch
/// layout and the stream's scratch buffer.
struct CallPlan {
  int64_t tokens = 0, blockM = 0, rows = 0;
  KernelSpec gemm1, gemm2;
  bool fused = false, atomic = false;
  std::string notFused, notAtomic;
  ScratchLayout layout;
  char *scratch = nullptr;

  char *at(ScratchLayout::Piece p) const { return scratch + layout.offset[p]; }
};

/// The plan of a call of `tokens` at `blockM` with `o`; reserves the split-K
/// scratch of calls up to `tokens` with `reserveFor`'s block_m (dispatch's
/// for fusedMoeA4W4, the caller's for the stages alone). `debug`: stage 1
/// also writes its f32 activations.
Expected<CallPlan> planCall(Device &dev, void *stream, const MoeWeights &w, int64_t tokens,
                            int64_t blockM, const FusedMoeOptions &o,
                            const FusedMoeOptions &reserveFor, bool debug) {
  const MoeShape &s = w.shape();
  const Arch arch = w.arch();
  const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
  const bool below = w.impl().w1->scalesBelow128();
  const MoeKernelShape ks{s.experts,         s.topk,     s.hidden, s.inter, blockM,
                          o.activation.kind, o.rounding, tokens,   below};
  const int64_t blocks = moeExpectedBlocks(tokens, s.topk, s.experts, blockM);
  CallPlan p;
  p.tokens = tokens;
  p.blockM = blockM;
  p.rows = moeMaxRows(s, tokens, blockM);
  // Each variant where it applies; otherwise the plain moe_gemm and the
  // reason, which the debug log gives.
  Expected<KernelSpec> g1 =
      !o.fuseActivation
          ? Expected<KernelSpec>(fail("the caller turned it off (FusedMoeOptions::fuseActivation)"))
      : w.impl().bias1
          ? Expected<KernelSpec>(fail("W1 has a bias, which the fused epilogue does not add"))
          : makeMoeStage1FusedSpec(arch, ks, debug);
  p.fused = bool(g1);
  if (!g1) {
    p.notFused = g1.takeError().message();
    g1 = makeMoeGemmSpec(arch, 2 * ip, hp, blockM, blocks, below);
  }
  Expected<KernelSpec> g2 =
      o.combine != MoeCombine::Atomic
          ? Expected<KernelSpec>(
                fail("the caller asked for the reduction (FusedMoeOptions::combine)"))
          : makeMoeStage2AtomicSpec(arch, ks);
  p.atomic = bool(g2);
  if (!g2) {
    p.notAtomic = g2.takeError().message();
    g2 = makeMoeGemmSpec(arch, hp, ip, blockM, blocks, w.impl().w2->scalesBelow128());
  }
  if (!g1)
    return g1.takeError();
  if (!g2)
    return g2.takeError();
  p.gemm1 = *g1;
  p.gemm2 = *g2;
  p.layout = ScratchLayout(arch, s, tokens, blockM, sortExperts(w, o), !p.fused, p.atomic);
  Expected<char *> scratch = w.impl().scratchFor(p.layout.total, stream);
  if (!scratch)
    return scratch.takeError();
  p.scratch = *scratch;
  if (Error e = reserveSplitKScratch(dev, w, tokens, reserveFor, stream))
    return e;
  return p;
}

/// Stage 1 on a planned call.
Error runStage1(Device &dev, void *stream, const CallPlan &p, const void *hidden,
                const MoeSorted &sorted, const MoeWeights &weights, const FusedMoeOptions &options,
                void *codes, void *scales, float *debugActivations) {
  const MoeShape &s = weights.shape();
  const Arch arch = weights.arch();
  if (debugLogging())
    logDebug(
        strCat("moe stage 1 at ", p.tokens, " tokens, block_m ", p.blockM, ": ",
               p.fused ? std::string("fused (activation and MXFP4 quantization in "
                                     "moe_gemm's epilogue)")
                       : strCat("bf16 gate/up then moe_actq (no fused epilogue: ", p.notFused, ")"),
               ", ", p.gemm1.name(), ", K split ", p.gemm1.splitK));
  void *a1 = p.at(ScratchLayout::A1Codes), *a1s = p.at(ScratchLayout::A1Scales);
  if (Error e = moeQuantizeRows(dev, stream, hidden, p.tokens, s.hidden, sorted.sortedIds,
                                sorted.numValid, p.rows, a1, a1s, options.rounding, arch,
                                p.gemm1.moeScaleRep))
    return e;
  if (p.fused) {
    const ActMxArgs act{codes,
                        scales,
                        sorted.sortedWeights,
                        debugActivations,
                        options.activation,
                        options.doweightStage1,
                        int32_t(s.inter)};
    return launchMoeGemm(dev, stream, p.gemm1, *weights.impl().w1, a1, a1s, sorted, p.rows,
                         p.tokens, act);
  }
  void *gateUp = p.at(ScratchLayout::GateUp);
  if (Error e = launchMoeGemm(dev, stream, p.gemm1, *weights.impl().w1, a1, a1s, sorted, p.rows,
                              p.tokens, Bf16Out{gateUp}))
    return e;
  return moeActivationQuantize(
      dev, stream, gateUp, sorted.sortedWeights, sorted.numValid, p.rows, s.inter,
      options.activation, options.doweightStage1, codes, scales, debugActivations, options.rounding,
      arch, {weights.impl().bias1, sorted.expertIds, sorted.blockM}, p.gemm1.moeScaleRep);
}

/// Stage 2 on a planned call.
Error runStage2(Device &dev, void *stream, const CallPlan &p, const void *codes, const void *scales,
                const MoeSorted &sorted, const int32_t *positions, const float *topkWeights,
                const MoeWeights &weights, const FusedMoeOptions &options, void *out) {
  const MoeShape &s = weights.shape();
  const Arch arch = weights.arch();
  if (debugLogging())
    logDebug(strCat(
        "moe stage 2 at ", p.tokens, " tokens, block_m ", p.blockM, ": ",
        p.atomic ? std::string("atomic (rows added to an f32 accumulator, then "
                               "moe_cast)")
                 : strCat("per-slot rows then moe_reduce (no atomic path: ", p.notAtomic, ")"),
        ", ", p.gemm2.name(), ", K split ", p.gemm2.splitK));
  if (!p.atomic) {
    void *y = p.at(ScratchLayout::Y);
    if (Error e = launchMoeGemm(dev, stream, p.gemm2, *weights.impl().w2, codes, scales, sorted,
                                p.rows, p.tokens, Bf16Out{y}))
      return e;
    return moeReduce(dev, stream, y, topkWeights, positions, p.tokens, s.topk, s.hidden,
                     !options.doweightStage1, out, arch,
                     {weights.impl().bias2, sorted.expertIds, sorted.blockM});
  }
  // The cast's kernel first: nothing is left half done if it cannot be had.
  Expected<KernelSpec> castSpec = makeMoeCastSpec(arch, s.hidden);
  if (!castSpec)
    return castSpec.takeError();
  Expected<std::shared_ptr<const CompiledKernel>> cast = Jit::global().get(*castSpec);
  if (!cast)
    return cast.takeError();
  const int64_t hp = moePaddedRow(arch, s.hidden);
  auto *acc = reinterpret_cast<float *>(p.at(ScratchLayout::Acc));
  if (Error e = dev.fill(acc, 0, size_t(p.tokens * hp * 4), stream))
    return e;
  const ScatterArgs scatter{acc,
                            sorted.sortedIds,
                            sorted.sortedWeights,
                            weights.impl().bias2,
                            !options.doweightStage1,
                            int32_t(p.tokens),
                            int32_t(s.hidden)};
  if (Error e = launchMoeGemm(dev, stream, p.gemm2, *weights.impl().w2, codes, scales, sorted,
                              p.rows, p.tokens, scatter))
    return e;
  void *accArg = acc, *outArg = out;
  int32_t tokens = int32_t(p.tokens);
  void *args[] = {&accArg, &outArg, &tokens};
  return dev.launch(**cast, (*cast)->geometry(p.tokens), args, stream);
}

/// The options with the sorting's block_m (the stages alone take the
/// caller's at every token count).
FusedMoeOptions withBlockM(const FusedMoeOptions &o, const MoeSorted &sorted) {
  FusedMoeOptions fixed = o;
  fixed.blockM = sorted.blockM;
  return fixed;
}

Error checkSorted(const char *api, const MoeSorted &sorted) {
  if (sorted.blockM != 16 && sorted.blockM != 32 && sorted.blockM != 64 && sorted.blockM != 128)
    return fail(api, ": the sorting's blockM must be 16, 32, 64 or 128, got ", sorted.blockM);
  return Error::success();
}

} // namespace

Error moeStage1(Device &dev, void *stream, const void *hidden, int64_t tokens,
                const MoeSorted &sorted, const MoeWeights &weights, const FusedMoeOptions &options,
                void *codes, void *scales, float *debugActivations) {
  const char *api = "moeStage1";
  if (Error e = checkCall(api, dev, weights, tokens, options))
    return e;
  if (!hidden || !codes || !scales || !sorted.sortedIds || !sorted.sortedWeights ||
      !sorted.expertIds || !sorted.numValid)
    return fail(api, ": a required pointer is null");
  if (!aligned(hidden) || !aligned(codes))
    return fail(api, ": hidden and codes must be 4-byte aligned");
  if (Error e = checkSorted(api, sorted))
    return e;
  const FusedMoeOptions fixed = withBlockM(options, sorted);
  Expected<CallPlan> plan = planCall(dev, stream, weights, tokens, sorted.blockM, fixed, fixed,
                                     debugActivations != nullptr);
  if (!plan)
    return plan.takeError();
  return runStage1(dev, stream, *plan, hidden, sorted, weights, options, codes, scales,
                   debugActivations);
}

Error moeStage2(Device &dev, void *stream, const void *codes, const void *scales, int64_t tokens,
                const MoeSorted &sorted, const int32_t *positions, const float *topkWeights,
                const MoeWeights &weights, const FusedMoeOptions &options, void *out) {
  const char *api = "moeStage2";
  if (Error e = checkCall(api, dev, weights, tokens, options))
    return e;
  if (!codes || !scales || !positions || !topkWeights || !out || !sorted.expertIds ||
      !sorted.numValid)
    return fail(api, ": a required pointer is null");
  if (options.combine == MoeCombine::Atomic && (!sorted.sortedIds || !sorted.sortedWeights))
    return fail(api, ": the atomic stage 2 reads the sorting's ids and weights; a pointer is null");
  if (!aligned(codes) || !aligned(out))
    return fail(api, ": codes and out must be 4-byte aligned");
  if (Error e = checkSorted(api, sorted))
    return e;
  const FusedMoeOptions fixed = withBlockM(options, sorted);
  Expected<CallPlan> plan =
      planCall(dev, stream, weights, tokens, sorted.blockM, fixed, fixed, false);
  if (!plan)
    return plan.takeError();
  return runStage2(dev, stream, *plan, codes, scales, sorted, positions, topkWeights, weights,
                   options, out);
}

Error fusedMoeA4W4(Device &dev, void *stream, const void *hidden, int64_t tokens,
                   const int32_t *topkIds, const float *topkWeights, const MoeWeights &weights,
                   const FusedMoeOptions &options, void *out) {
  const char *api = "fusedMoeA4W4";
  if (Error e = checkCall(api, dev, weights, tokens, options))
    return e;
  if (!hidden || !topkIds || !topkWeights || !out)
    return fail(api, ": a required pointer is null");
  if (!aligned(hidden) || !aligned(topkIds) || !aligned(topkWeights) || !aligned(out) ||
      !aligned(options.expertMask) || !aligned(options.dropped))
    return fail(api, ": every buffer must be 4-byte aligned");
  const MoeShape &s = weights.shape();
  const int64_t bm = moeBlockM(weights.arch(), s, tokens, options, dev.multiprocessorCount());
  // The split-K scratch of smaller calls is reserved at dispatch's block_m
  // for each.
  FusedMoeOptions atBm = options;
  atBm.blockM = bm;
  Expected<CallPlan> plan = planCall(dev, stream, weights, tokens, bm, atBm, options, false);
  if (!plan)
    return plan.takeError();
  const CallPlan &p = *plan;
  MoeSortBuffers sb;
  sb.topkIds = topkIds;
  sb.topkWeights = topkWeights;
  sb.expertMask = options.expertMask;
  sb.sortedIds = reinterpret_cast<int32_t *>(p.at(ScratchLayout::SortedIds));
  sb.sortedWeights = reinterpret_cast<float *>(p.at(ScratchLayout::SortedWeights));
  sb.expertIds = reinterpret_cast<int32_t *>(p.at(ScratchLayout::ExpertIds));
  sb.numValid = reinterpret_cast<int32_t *>(p.at(ScratchLayout::NumValid));
  sb.status =
      options.dropped ? options.dropped : reinterpret_cast<int32_t *>(p.at(ScratchLayout::Status));
  sb.positions = reinterpret_cast<int32_t *>(p.at(ScratchLayout::Positions));
  sb.workspace = reinterpret_cast<int32_t *>(p.at(ScratchLayout::Workspace));
  if (Error e = moeSort(dev, stream, {tokens, s.topk, sortExperts(weights, options), bm}, sb,
                        weights.arch()))
    return e;
  MoeSorted sorted{sb.sortedIds, sb.sortedWeights, sb.expertIds, sb.numValid, bm};
  void *a2 = p.at(ScratchLayout::A2Codes), *a2s = p.at(ScratchLayout::A2Scales);
  if (Error e = runStage1(dev, stream, p, hidden, sorted, weights, options, a2, a2s, nullptr))
    return e;
  return runStage2(dev, stream, p, a2, a2s, sorted, sb.positions, topkWeights, weights, options,
                   out);
}

} // namespace mxfp4
