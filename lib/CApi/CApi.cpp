//===- CApi.cpp - The C API (include/mxfp4/mxfp4.h) over the C++ one -------===//
//
// Each entry point checks what C can get wrong (NULL handles and pointers,
// sizes, enum values) and then calls the C++ API inside `guard`, which turns
// an Error into a status plus this thread's message and catches every
// exception, so nothing unwinds into C.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/mxfp4.h"

#include "CApiHandles.h"

#include "mxfp4/Format/Quantize.h"
#include "mxfp4/JIT/Version.h"
#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/QuantizeMx.h"
#include "mxfp4/Support/Checked.h"

#include <cstring>
#include <new>
#include <optional>
#include <set>

using namespace mxfp4;

namespace {

thread_local std::string lastError;

mxfp4_status fail(mxfp4_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

mxfp4_status fail(const Error &e) {
  const std::string &m = e.message();
  return fail(m.rfind("no device", 0) == 0 ? MXFP4_STATUS_NO_DEVICE : MXFP4_STATUS_ERROR, m);
}

/// Runs `body` (returning mxfp4_status) with every exception caught.
template <typename F> mxfp4_status guard(const char *function, F &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(MXFP4_STATUS_OUT_OF_MEMORY, strCat(function, ": out of host memory"));
  } catch (const std::exception &e) {
    return fail(MXFP4_STATUS_INTERNAL, strCat(function, ": internal error: ", e.what()));
  } catch (...) {
    return fail(MXFP4_STATUS_INTERNAL, strCat(function, ": internal error"));
  }
}

mxfp4_status invalid(const char *function, std::string_view what) {
  return fail(MXFP4_STATUS_INVALID_ARGUMENT, strCat(function, ": ", what));
}

#define MXFP4_REQUIRE(cond, what)                                                                  \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return invalid(__func__, what);                                                              \
  } while (0)

std::optional<Arch> toArch(mxfp4_arch a) {
  switch (a) {
  case MXFP4_ARCH_GFX950:
    return Arch::GFX950;
  case MXFP4_ARCH_GFX1250:
    return Arch::GFX1250;
  case MXFP4_ARCH_SM90A:
    return Arch::SM90A;
  default:
    return std::nullopt;
  }
}

mxfp4_arch fromArch(Arch a) {
  switch (a) {
  case Arch::GFX950:
    return MXFP4_ARCH_GFX950;
  case Arch::GFX1250:
    return MXFP4_ARCH_GFX1250;
  case Arch::SM90A:
    return MXFP4_ARCH_SM90A;
  }
  return MXFP4_ARCH_DEVICE;
}

bool validArch(mxfp4_arch a) { return a == MXFP4_ARCH_DEVICE || toArch(a).has_value(); }

bool validRounding(mxfp4_rounding r) {
  return r >= MXFP4_ROUNDING_ROUNDUP && r <= MXFP4_ROUNDING_NEAREST;
}
ScaleRounding toRounding(mxfp4_rounding r) { return static_cast<ScaleRounding>(r); }

/// The device's target for `arch` = MXFP4_ARCH_DEVICE, else `arch`.
Expected<Arch> resolveArch(const Device &dev, mxfp4_arch arch) {
  if (std::optional<Arch> a = toArch(arch))
    return *a;
  return targetArch(&dev);
}

/// `bytes` == rows * cols / divisor (rows, cols > 0), without overflow.
bool sizeMatches(size_t bytes, std::optional<int64_t> rows, int64_t cols, int64_t divisor) {
  if (!rows || *rows <= 0 || cols <= 0 || cols % divisor != 0)
    return false;
  std::optional<int64_t> want = checkedProduct({*rows, cols / divisor});
  return want && uint64_t(*want) == bytes;
}

/// Reads an options struct of `size` bytes the caller built against some
/// version of the header: fields past `size` keep their defaults.
template <typename T> mxfp4_status readOptions(const char *function, const T *in, T &out) {
  if (!in)
    return MXFP4_STATUS_OK;
  // struct_size leads every options struct.
  const size_t size = in->struct_size;
  if (size < sizeof(size_t) || size > (1u << 16))
    return invalid(function, strCat("struct_size ", size, " is not sizeof of a version",
                                    " of the options struct (", sizeof(T), " here)"));
  std::memcpy(&out, in, std::min(size, sizeof(T)));
  out.struct_size = sizeof(T);
  return MXFP4_STATUS_OK;
}

} // namespace

extern "C" {

uint32_t mxfp4_abi_version(void) { return MXFP4_ABI_VERSION; }

const char *mxfp4_version(void) { return version(); }

const char *mxfp4_compiler_identity(void) {
  static const std::string identity = [] {
    try {
      return compilerIdentity();
    } catch (...) {
      return std::string("unknown");
    }
  }();
  return identity.c_str();
}

const char *mxfp4_last_error_message(void) { return lastError.c_str(); }

const char *mxfp4_status_string(mxfp4_status status) {
  switch (status) {
  case MXFP4_STATUS_OK:
    return "ok";
  case MXFP4_STATUS_INVALID_ARGUMENT:
    return "invalid argument";
  case MXFP4_STATUS_NO_DEVICE:
    return "no device";
  case MXFP4_STATUS_ERROR:
    return "error";
  case MXFP4_STATUS_OUT_OF_MEMORY:
    return "out of memory";
  case MXFP4_STATUS_INTERNAL:
    return "internal error";
  }
  return "unknown status";
}

const char *mxfp4_arch_string(mxfp4_arch arch) {
  if (arch == MXFP4_ARCH_DEVICE)
    return "device";
  std::optional<Arch> a = toArch(arch);
  return a ? toString(*a).data() : "unknown";
}

//===--- Device -----------------------------------------------------------===//

mxfp4_status mxfp4_device_open(int ordinal, mxfp4_device **out) {
  MXFP4_REQUIRE(out, "out is NULL");
  *out = nullptr;
  MXFP4_REQUIRE(ordinal >= 0, "the ordinal is negative");
  return guard(__func__, [&] {
    Expected<std::unique_ptr<Device>> dev = Device::open(ordinal);
    if (!dev)
      return fail(dev.takeError());
    *out = new mxfp4_device{std::move(*dev)};
    return MXFP4_STATUS_OK;
  });
}

void mxfp4_device_destroy(mxfp4_device *dev) { delete dev; }

mxfp4_status mxfp4_device_arch(const mxfp4_device *dev, mxfp4_arch *out) {
  MXFP4_REQUIRE(dev && out, "dev or out is NULL");
  *out = fromArch(dev->device->arch());
  return MXFP4_STATUS_OK;
}

mxfp4_status mxfp4_device_name(const mxfp4_device *dev, char *buffer, size_t size) {
  MXFP4_REQUIRE(dev && buffer && size > 0, "dev or buffer is NULL, or size is 0");
  return guard(__func__, [&] {
    std::string name = dev->device->name();
    size_t n = std::min(name.size(), size - 1);
    std::memcpy(buffer, name.data(), n);
    buffer[n] = '\0';
    return MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_device_alloc(mxfp4_device *dev, size_t bytes, void **out) {
  MXFP4_REQUIRE(out, "out is NULL");
  *out = nullptr;
  MXFP4_REQUIRE(dev, "dev is NULL");
  MXFP4_REQUIRE(bytes > 0, "bytes is 0");
  return guard(__func__, [&] {
    Expected<void *> p = dev->device->alloc(bytes);
    if (!p)
      return fail(p.takeError());
    *out = *p;
    return MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_device_free(mxfp4_device *dev, void *ptr) {
  MXFP4_REQUIRE(dev, "dev is NULL");
  return guard(__func__, [&] {
    if (ptr)
      dev->device->free(ptr);
    return MXFP4_STATUS_OK;
  });
}

static mxfp4_status copy(const char *function, mxfp4_device *dev, void *dst, const void *src,
                         size_t bytes, bool toDevice) {
  if (!dev || ((!dst || !src) && bytes > 0))
    return invalid(function, "dev, dst or src is NULL");
  return guard(function, [&] {
    if (bytes == 0)
      return MXFP4_STATUS_OK;
    Error e = toDevice ? dev->device->copyToDevice(dst, src, bytes)
                       : dev->device->copyToHost(dst, src, bytes);
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_copy_to_device(mxfp4_device *dev, void *dst, const void *src, size_t bytes) {
  return copy(__func__, dev, dst, src, bytes, true);
}

mxfp4_status mxfp4_copy_to_host(mxfp4_device *dev, void *dst, const void *src, size_t bytes) {
  return copy(__func__, dev, dst, src, bytes, false);
}

mxfp4_status mxfp4_device_synchronize(mxfp4_device *dev) {
  MXFP4_REQUIRE(dev, "dev is NULL");
  return guard(__func__, [&] {
    Error e = dev->device->synchronize();
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

//===--- Dense GEMM -------------------------------------------------------===//

mxfp4_status mxfp4_gemm_weight_prepare(mxfp4_device *dev, const uint8_t *w_fp4, size_t w_fp4_bytes,
                                       const uint8_t *w_scale, size_t w_scale_bytes, int64_t n,
                                       int64_t k, mxfp4_arch arch, mxfp4_gemm_weight **out) {
  MXFP4_REQUIRE(out, "out is NULL");
  *out = nullptr;
  MXFP4_REQUIRE(dev && w_fp4 && w_scale, "dev, w_fp4 or w_scale is NULL");
  MXFP4_REQUIRE(validArch(arch), strCat("arch ", static_cast<int>(arch), " is not an mxfp4_arch"));
  MXFP4_REQUIRE(sizeMatches(w_fp4_bytes, n, k, 2) && sizeMatches(w_scale_bytes, n, k, 32),
                strCat("n ", n, " x k ", k, " (k a multiple of 32) needs ", "n*k/2 code and ",
                       "n*k/32 scale bytes; got ", w_fp4_bytes, " and ", w_scale_bytes));
  return guard(__func__, [&] {
    Expected<Arch> a = resolveArch(*dev->device, arch);
    if (!a)
      return fail(a.takeError());
    Expected<std::unique_ptr<PreparedWeight>> w =
        prepareGemmA4W4Weight(*dev->device, Span<uint8_t>(w_fp4, w_fp4_bytes),
                              Span<uint8_t>(w_scale, w_scale_bytes), n, k, *a);
    if (!w)
      return fail(w.takeError());
    *out = new mxfp4_gemm_weight{std::move(*w)};
    return MXFP4_STATUS_OK;
  });
}

void mxfp4_gemm_weight_destroy(mxfp4_gemm_weight *w) { delete w; }

mxfp4_status mxfp4_gemm_weight_shape(const mxfp4_gemm_weight *w, int64_t *n, int64_t *k) {
  MXFP4_REQUIRE(w && n && k, "w, n or k is NULL");
  *n = w->weight->n();
  *k = w->weight->k();
  return MXFP4_STATUS_OK;
}

/// Checks the handles shared by the GEMM entry points: `w` must live on `dev`.
static mxfp4_status checkGemmHandles(const char *function, const mxfp4_device *dev,
                                     const mxfp4_gemm_weight *w) {
  if (!dev || !w)
    return invalid(function, "dev or w is NULL");
  if (&w->weight->device() != dev->device.get())
    return invalid(function, "w was prepared on another device");
  return MXFP4_STATUS_OK;
}

mxfp4_status mxfp4_gemm_a4w4(mxfp4_device *dev, void *stream, const void *a, int64_t m,
                             const mxfp4_gemm_weight *w, void *out,
                             const mxfp4_gemm_options *options) {
  if (mxfp4_status s = checkGemmHandles(__func__, dev, w))
    return s;
  mxfp4_gemm_options o{sizeof(o), MXFP4_ROUNDING_ROUNDUP};
  if (mxfp4_status s = readOptions(__func__, options, o))
    return s;
  MXFP4_REQUIRE(validRounding(o.rounding), "options->rounding is not an mxfp4_rounding");
  return guard(__func__, [&] {
    GemmA4W4Options opts;
    opts.rounding = toRounding(o.rounding);
    Error e = gemmA4W4(*dev->device, stream, a, m, *w->weight, out, opts);
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_gemm_mx_a4w4(mxfp4_device *dev, void *stream, const void *a_codes,
                                const void *a_scales, int64_t m, const mxfp4_gemm_weight *w,
                                void *out) {
  if (mxfp4_status s = checkGemmHandles(__func__, dev, w))
    return s;
  return guard(__func__, [&] {
    Error e = gemmMxA4W4(*dev->device, stream, a_codes, a_scales, m, *w->weight, out);
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

//===--- Quantization -----------------------------------------------------===//

mxfp4_status mxfp4_quantize(mxfp4_device *dev, void *stream, const void *a, int64_t m, int64_t k,
                            void *codes, void *scales, mxfp4_rounding rounding) {
  MXFP4_REQUIRE(dev, "dev is NULL");
  MXFP4_REQUIRE(validRounding(rounding), "rounding is not an mxfp4_rounding");
  return guard(__func__, [&] {
    Error e = quantizeMxfp4(*dev->device, stream, a, m, k, codes, scales, toRounding(rounding));
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_quantize_host(const uint16_t *bf16, int64_t rows, int64_t cols,
                                 mxfp4_rounding rounding, uint8_t *codes, uint8_t *scales) {
  MXFP4_REQUIRE(bf16 && codes && scales, "bf16, codes or scales is NULL");
  MXFP4_REQUIRE(validRounding(rounding), "rounding is not an mxfp4_rounding");
  MXFP4_REQUIRE(
      rows >= 1 && cols >= 32 && cols % 32 == 0 && checkedProduct({rows, cols}),
      strCat("rows ", rows, " x cols ", cols, " is not a matrix of whole 32-element blocks"));
  return guard(__func__, [&] {
    Expected<MxMatrix> q = quantizeBf16(Span<uint16_t>(bf16, static_cast<size_t>(rows * cols)),
                                        rows, cols, toRounding(rounding));
    if (!q)
      return fail(q.takeError());
    std::memcpy(codes, q->data.data(), q->data.size());
    std::memcpy(scales, q->scales.data(), q->scales.size());
    return MXFP4_STATUS_OK;
  });
}

//===--- Fused MoE --------------------------------------------------------===//

mxfp4_status
mxfp4_moe_weights_prepare(mxfp4_device *dev, const mxfp4_moe_shape *shape, const uint8_t *w1_fp4,
                          size_t w1_fp4_bytes, const uint8_t *w1_scale, size_t w1_scale_bytes,
                          const uint8_t *w2_fp4, size_t w2_fp4_bytes, const uint8_t *w2_scale,
                          size_t w2_scale_bytes, const float *w1_bias, const float *w2_bias,
                          mxfp4_gate_up_layout layout, mxfp4_arch arch, mxfp4_moe_weights **out) {
  MXFP4_REQUIRE(out, "out is NULL");
  *out = nullptr;
  MXFP4_REQUIRE(dev && shape && w1_fp4 && w1_scale && w2_fp4 && w2_scale,
                "dev, shape or a weight pointer is NULL");
  MXFP4_REQUIRE(validArch(arch), strCat("arch ", static_cast<int>(arch), " is not an mxfp4_arch"));
  MXFP4_REQUIRE(layout == MXFP4_GATE_UP_GGUU || layout == MXFP4_GATE_UP_GUGU,
                "layout is not an mxfp4_gate_up_layout");
  MoeShape s{shape->experts, shape->topk, shape->hidden, shape->inter};
  if (Error e = checkMoeShape(s))
    return fail(MXFP4_STATUS_INVALID_ARGUMENT, strCat(__func__, ": ", e.message()));
  const std::optional<int64_t> w1Rows = checkedProduct({s.experts, 2, s.inter});
  const std::optional<int64_t> w2Rows = checkedProduct({s.experts, s.hidden});
  MXFP4_REQUIRE(sizeMatches(w1_fp4_bytes, w1Rows, s.hidden, 2) &&
                    sizeMatches(w1_scale_bytes, w1Rows, s.hidden, 32) &&
                    sizeMatches(w2_fp4_bytes, w2Rows, s.inter, 2) &&
                    sizeMatches(w2_scale_bytes, w2Rows, s.inter, 32),
                strCat("the weight sizes do not match E ", s.experts, ", hidden ", s.hidden,
                       ", inter ", s.inter, " (W1 [E, 2 inter, hidden/2], W2 [E, hidden, ",
                       "inter/2], scales per 32)"));
  return guard(__func__, [&] {
    Expected<Arch> a = resolveArch(*dev->device, arch);
    if (!a)
      return fail(a.takeError());
    MoeBiases biases;
    if (w1_bias)
      biases.w1 = Span<float>(w1_bias, static_cast<size_t>(*w1Rows));
    if (w2_bias)
      biases.w2 = Span<float>(w2_bias, static_cast<size_t>(*w2Rows));
    Expected<std::unique_ptr<MoeWeights>> w = prepareMoeWeights(
        *dev->device, s, Span<uint8_t>(w1_fp4, w1_fp4_bytes),
        Span<uint8_t>(w1_scale, w1_scale_bytes), Span<uint8_t>(w2_fp4, w2_fp4_bytes),
        Span<uint8_t>(w2_scale, w2_scale_bytes),
        layout == MXFP4_GATE_UP_GUGU ? GateUpLayout::Gugu : GateUpLayout::Gguu, *a, biases);
    if (!w)
      return fail(w.takeError());
    *out = new mxfp4_moe_weights{std::move(*w), dev->device.get()};
    return MXFP4_STATUS_OK;
  });
}

void mxfp4_moe_weights_destroy(mxfp4_moe_weights *w) { delete w; }

mxfp4_status mxfp4_fused_moe_a4w4(mxfp4_device *dev, void *stream, const void *hidden,
                                  int64_t tokens, const int32_t *topk_ids,
                                  const float *topk_weights, const mxfp4_moe_weights *w,
                                  const mxfp4_moe_options *options, void *out) {
  MXFP4_REQUIRE(dev && w && options, "dev, w or options is NULL");
  MXFP4_REQUIRE(w->device == dev->device.get(), "w was prepared on another device");
  mxfp4_moe_options o{};
  o.struct_size = sizeof(o);
  if (mxfp4_status s = readOptions(__func__, options, o))
    return s;
  MXFP4_REQUIRE(o.activation >= MXFP4_ACTIVATION_SILU && o.activation <= MXFP4_ACTIVATION_SITUV2,
                "options->activation is not an mxfp4_activation");
  MXFP4_REQUIRE(validRounding(o.rounding), "options->rounding is not an mxfp4_rounding");
  MXFP4_REQUIRE(o.combine == MXFP4_MOE_COMBINE_REDUCE || o.combine == MXFP4_MOE_COMBINE_ATOMIC,
                "options->combine is not an mxfp4_moe_combine");
  return guard(__func__, [&] {
    FusedMoeOptions opts;
    opts.activation = {static_cast<Activation>(o.activation), o.param0, o.param1};
    opts.rounding = toRounding(o.rounding);
    opts.doweightStage1 = o.doweight_stage1 != 0;
    opts.blockM = o.block_m;
    opts.expertMask = o.expert_mask;
    opts.globalExperts = o.global_experts;
    opts.dropped = o.dropped;
    opts.fuseActivation = o.unfused_activation == 0;
    opts.combine = o.combine == MXFP4_MOE_COMBINE_ATOMIC ? MoeCombine::Atomic : MoeCombine::Reduce;
    Error e = fusedMoeA4W4(*dev->device, stream, hidden, tokens, topk_ids, topk_weights,
                           *w->weights, opts, out);
    return e ? fail(e) : MXFP4_STATUS_OK;
  });
}

//===--- JIT --------------------------------------------------------------===//

mxfp4_status mxfp4_jit_create(const mxfp4_jit_options *options, mxfp4_jit **out) {
  MXFP4_REQUIRE(out, "out is NULL");
  *out = nullptr;
  mxfp4_jit_options o{sizeof(o), nullptr, 0};
  if (mxfp4_status s = readOptions(__func__, options, o))
    return s;
  return guard(__func__, [&] {
    Jit::Options opts = Jit::Options::fromEnv();
    if (options) {
      opts.cacheDir = o.cache_dir ? o.cache_dir : "";
      opts.disableDisk = opts.cacheDir.empty();
      opts.assertCacheHit = o.assert_cache_hit != 0;
    }
    auto owned = std::make_unique<Jit>(opts);
    Jit *raw = owned.get();
    *out = new mxfp4_jit{std::move(owned), raw};
    return MXFP4_STATUS_OK;
  });
}

void mxfp4_jit_destroy(mxfp4_jit *jit) {
  if (jit && jit->owned) // the global one is never destroyed
    delete jit;
}

mxfp4_jit *mxfp4_jit_global(void) {
  try {
    static mxfp4_jit global{nullptr, &Jit::global()};
    return &global;
  } catch (...) {
    lastError = "mxfp4_jit_global: the process-wide JIT could not be created";
    return nullptr;
  }
}

mxfp4_status mxfp4_jit_get_kernel(mxfp4_jit *jit, const char *kernel_name) {
  MXFP4_REQUIRE(jit && kernel_name, "jit or kernel_name is NULL");
  return guard(__func__, [&] {
    Expected<KernelSpec> spec = parseKernelName(kernel_name);
    if (!spec)
      return fail(MXFP4_STATUS_INVALID_ARGUMENT,
                  strCat(__func__, ": ", spec.takeError().message()));
    Expected<std::shared_ptr<const CompiledKernel>> k = jit->jit->get(*spec);
    return k ? MXFP4_STATUS_OK : fail(k.takeError());
  });
}

mxfp4_status mxfp4_jit_precompile_gemm(mxfp4_jit *jit, mxfp4_arch arch, int64_t n, int64_t k,
                                       const int64_t *ms, size_t m_count, mxfp4_rounding rounding,
                                       int64_t compute_units, size_t *kernels) {
  MXFP4_REQUIRE(jit && ms && m_count > 0, "jit or ms is NULL, or m_count is 0");
  std::optional<Arch> a = toArch(arch);
  MXFP4_REQUIRE(a, "arch must name a target (there is no device to ask)");
  MXFP4_REQUIRE(validRounding(rounding), "rounding is not an mxfp4_rounding");
  MXFP4_REQUIRE(compute_units >= 0, "compute_units is negative");
  for (size_t i = 0; i < m_count; ++i)
    MXFP4_REQUIRE(ms[i] >= 1, strCat("ms[", i, "] = ", ms[i], " is not an M >= 1"));
  return guard(__func__, [&] {
    GemmA4W4Options opts;
    opts.rounding = toRounding(rounding);
    std::set<std::string> done;
    for (size_t i = 0; i < m_count; ++i)
      for (bool small : {false, true}) {
        if (small && *a != Arch::SM90A)
          continue; // only sm_90a has kernels that fold the weight scales
        Expected<GemmA4W4Plan> plan = planGemmA4W4({*a, n, k, small, compute_units}, ms[i], opts);
        if (!plan)
          return fail(plan.takeError());
        for (const KernelSpec &spec : plan->kernels()) {
          if (!done.insert(spec.name()).second)
            continue;
          Expected<std::shared_ptr<const CompiledKernel>> got = jit->jit->get(spec);
          if (!got)
            return fail(got.takeError());
        }
      }
    if (kernels)
      *kernels = done.size();
    return MXFP4_STATUS_OK;
  });
}

mxfp4_status mxfp4_jit_stats_get(const mxfp4_jit *jit, mxfp4_jit_stats *out) {
  MXFP4_REQUIRE(jit && out, "jit or out is NULL");
  const Jit::Stats &s = jit->jit->stats();
  *out = {s.memoryHits.load(), s.diskHits.load(), s.compiles.load(), s.corruptEntries.load()};
  return MXFP4_STATUS_OK;
}

const char *mxfp4_jit_cache_directory(const mxfp4_jit *jit) {
  if (!jit)
    return "";
  const Jit::Options &o = jit->jit->options();
  return o.disableDisk ? "" : o.cacheDir.c_str();
}

} // extern "C"
