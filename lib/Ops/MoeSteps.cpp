//===- MoeSteps.cpp - The MoE steps around the grouped GEMMs --------------===//

#include "mxfp4/Ops/MoeSteps.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Support/Checked.h"

#include <cmath>
#include <initializer_list>

namespace mxfp4 {

namespace {

/// Null and 4-byte alignment checks of an API's pointers (`optional` may be null).
Error checkPointers(const char *api, std::initializer_list<const void *> required,
                    std::initializer_list<const void *> optional = {}) {
  for (const void *p : required)
    if (!p)
      return makeError(api, ": a required pointer is null");
  for (auto list : {required, optional})
    for (const void *p : list)
      if (reinterpret_cast<uintptr_t>(p) % 4 != 0)
        return makeError(api, ": every buffer must be 4-byte aligned");
  return Error::success();
}

Error launch(Device &dev, void *stream, Expected<KernelSpec> spec, int64_t m,
             std::initializer_list<void *> args) {
  if (!spec)
    return spec.takeError();
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(*spec);
  if (!kernel)
    return kernel.takeError();
  std::vector<void *> argv(args);
  return dev.launch(**kernel, (*kernel)->geometry(m), argv.data(), stream);
}

Expected<Arch> archOf(Device &dev, std::optional<Arch> arch) {
  return arch ? Expected<Arch>(*arch) : targetArch(&dev);
}

/// Rows x columns must index with 32 bits (in elements).
Error checkIndexing(const char *api, int64_t rows, int64_t cols) {
  if (!productBelow({rows, cols}, kIndex32Limit))
    return makeError(api, ": ", rows, " x ", cols, " elements are too many for 32-bit indexing");
  return Error::success();
}

} // namespace

Error moeQuantizeRows(Device &dev, void *stream, const void *hidden, int64_t tokens,
                      int64_t hiddenSize, const int32_t *sortedIds, const int32_t *numValid,
                      int64_t maxRows, void *codes, void *scales, ScaleRounding rounding,
                      std::optional<Arch> archOpt, int64_t scaleRep) {
  const char *api = "moeQuantizeRows";
  if (tokens < 1 || tokens >= (int64_t(1) << 24))
    return makeError(api, ": tokens must be in [1, 2^24), got ", tokens);
  if (maxRows < 1)
    return makeError(api, ": maxRows must be >= 1, got ", maxRows);
  if (hiddenSize < 32 || hiddenSize % 32 != 0)
    return makeError(api, ": the hidden size must be a positive multiple of 32, got ", hiddenSize);
  if (Error e = checkIndexing(api, std::max(tokens, maxRows), hiddenSize))
    return e;
  if (Error e = checkPointers(api, {hidden, sortedIds, numValid, codes}))
    return e;
  if (!scales)
    return makeError(api, ": a required pointer is null");
  Expected<Arch> arch = archOf(dev, archOpt);
  if (!arch)
    return arch.takeError();
  void *h = const_cast<void *>(hidden), *ids = const_cast<int32_t *>(sortedIds),
       *valid = const_cast<int32_t *>(numValid);
  int32_t t = int32_t(tokens);
  return launch(dev, stream, makeMoeQuantSpec(*arch, hiddenSize, rounding, scaleRep), maxRows,
                {&h, &ids, &valid, &codes, &scales, &t});
}

Error checkMoeActivation(const MoeActivation &act) {
  switch (act.kind) {
  case Activation::Silu:
    break;
  case Activation::Swiglu:
    if (!std::isfinite(act.p0) || !(act.p1 > 0.0f) || !std::isfinite(act.p1))
      return makeError("swiglu takes a finite alpha (p0) and a finite limit (p1) > 0, got ", act.p0,
                       " and ", act.p1);
    break;
  case Activation::Situv2:
    if (!(act.p0 > 0.0f) || !(act.p1 > 0.0f) || !std::isfinite(act.p0) || !std::isfinite(act.p1))
      return makeError("situv2 takes finite beta (p0) and linear_beta (p1) > 0, got ", act.p0,
                       " and ", act.p1);
    break;
  case Activation::None:
    return makeError("the activation must be gated: silu, swiglu or situv2");
  }
  return Error::success();
}

/// A bias's kernel arguments: its values and block experts (any valid
/// pointer, `fallback`, where there is none), block_m and whether it is
/// there.
struct BiasArgs {
  void *values, *experts;
  int32_t blockM, present;
};
Expected<BiasArgs> biasArgs(const char *api, const MoeRowBias &bias, void *fallback) {
  if (!bias.values)
    return BiasArgs{fallback, fallback, 0, 0};
  if (Error e = checkPointers(api, {bias.values, bias.expertIds}))
    return e;
  if (bias.blockM != 16 && bias.blockM != 32 && bias.blockM != 64 && bias.blockM != 128)
    return makeError(api, ": the bias's blockM must be 16, 32, 64 or 128, got ", bias.blockM);
  return BiasArgs{const_cast<float *>(bias.values), const_cast<int32_t *>(bias.expertIds),
                  int32_t(bias.blockM), 1};
}

Error moeActivationQuantize(Device &dev, void *stream, const void *gateUp,
                            const float *sortedWeights, const int32_t *numValid, int64_t maxRows,
                            int64_t inter, const MoeActivation &act, bool doweight, void *codes,
                            void *scales, float *debug, ScaleRounding rounding,
                            std::optional<Arch> archOpt, const MoeRowBias &bias, int64_t scaleRep) {
  const char *api = "moeActivationQuantize";
  if (maxRows < 1)
    return makeError(api, ": maxRows must be >= 1, got ", maxRows);
  if (inter < 32 || inter % 32 != 0)
    return makeError(api, ": inter must be a positive multiple of 32, got ", inter);
  if (Error e = checkIndexing(api, maxRows, 2 * inter))
    return e;
  if (Error e = checkPointers(api, {gateUp, sortedWeights, numValid, codes}, {debug}))
    return e;
  if (!scales)
    return makeError(api, ": a required pointer is null");
  if (Error e = checkMoeActivation(act))
    return makeError(api, ": ", e.message());
  Expected<Arch> arch = archOf(dev, archOpt);
  if (!arch)
    return arch.takeError();
  void *in = const_cast<void *>(gateUp), *w = const_cast<float *>(sortedWeights),
       *valid = const_cast<int32_t *>(numValid);
  // Without a debug buffer the kernel never writes it: any valid pointer will do.
  void *dbg = debug ? static_cast<void *>(debug) : codes;
  Expected<BiasArgs> ba = biasArgs(api, bias, in);
  if (!ba)
    return ba.takeError();
  float p0 = act.p0, p1 = act.p1;
  int32_t weighted = doweight ? 1 : 0, writeDebug = debug ? 1 : 0;
  return launch(dev, stream, makeMoeActQuantSpec(*arch, inter, act.kind, rounding, scaleRep),
                maxRows,
                {&in, &w, &valid, &codes, &scales, &dbg, &ba->values, &ba->experts, &p0, &p1,
                 &weighted, &writeDebug, &ba->blockM, &ba->present});
}

Error moeReduce(Device &dev, void *stream, const void *y, const float *topkWeights,
                const int32_t *positions, int64_t tokens, int64_t topk, int64_t hiddenSize,
                bool useWeights, void *out, std::optional<Arch> archOpt, const MoeRowBias &bias) {
  const char *api = "moeReduce";
  if (tokens < 1 || tokens >= (int64_t(1) << 24))
    return makeError(api, ": tokens must be in [1, 2^24), got ", tokens);
  if (topk < 1 || topk > 255)
    return makeError(api, ": topk must be in [1, 255], got ", topk);
  if (hiddenSize < 8 || hiddenSize % 8 != 0)
    return makeError(api, ": the hidden size must be a positive multiple of 8, got ", hiddenSize);
  if (Error e = checkIndexing(api, tokens * topk, hiddenSize))
    return e;
  if (Error e = checkPointers(api, {y, topkWeights, positions, out}))
    return e;
  Expected<Arch> arch = archOf(dev, archOpt);
  if (!arch)
    return arch.takeError();
  void *yp = const_cast<void *>(y), *w = const_cast<float *>(topkWeights),
       *pos = const_cast<int32_t *>(positions);
  Expected<BiasArgs> ba = biasArgs(api, bias, yp);
  if (!ba)
    return ba.takeError();
  int32_t t = int32_t(tokens), weighted = useWeights ? 1 : 0;
  return launch(
      dev, stream, makeMoeReduceSpec(*arch, hiddenSize, topk), tokens,
      {&yp, &w, &pos, &out, &ba->values, &ba->experts, &t, &weighted, &ba->blockM, &ba->present});
}

} // namespace mxfp4
