//===- QuantizeMx.cpp - The public MXFP4 quantizer op ---------------------===//

#include "mxfp4/Ops/QuantizeMx.h"
#include "QuantizeMxLaunch.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Support/Checked.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mxfp4 {

int64_t selectQuantizeMxBm(int64_t m, int64_t k) {
  // No idle rows for small M, and at least ~4 workgroups per SM (132 on the
  // H200): each is a short latency-bound chain (load, block maximum, store).
  // Kernel times: scripts/device-profile.sh, see docs/Performance.md.
  int64_t bm = 8;
  while (bm < m && bm < 64 && (k / 128) * ((m + 2 * bm - 1) / (2 * bm)) >= 4 * 132)
    bm *= 2;
  return bm;
}

int64_t streamedQuantizerRows(int64_t m) {
  // A few chunks a thread per piece; no idle rows below M = 32.
  return m <= 8 ? 8 : m <= 16 ? 16 : 32;
}

/// The checks every quantizer launch shares: M, the pointers, 32-bit indexing.
static Error checkQuantizerArgs(const char *api, OpKind op, const void *a, int64_t m, int64_t k,
                                const std::vector<void *> &outputs) {
  auto fail = [&](const auto &...parts) { return makeError(api, ": ", parts...); };
  if (m < 1)
    return fail("M must be >= 1, got ", m);
  if (!a || std::find(outputs.begin(), outputs.end(), nullptr) != outputs.end())
    return fail("the input and output pointers must not be null");
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0)
    return fail("the input pointer must be 16-byte aligned");
  // codes: 4-byte words; the dequantized values: 16-byte units.
  if (reinterpret_cast<uintptr_t>(outputs[0]) % (op == OpKind::QdqMx ? 16 : 4) != 0)
    return fail(op == OpKind::QdqMx ? "the output pointer must be 16-byte aligned"
                                    : "the codes pointer must be 4-byte aligned");
  // Kernels index with 32 bits; the input is addressed in 16-byte units.
  if (k > 0 && !productBelow({m, k / 8}, kIndex32Limit))
    return fail("M = ", m, ", K = ", k, " is too large for 32-bit indexing");
  // The activation image is addressed in bytes (the GEMM's bulk copies).
  if (op == OpKind::QdqMx && sm90::activationImageElements(m, k) * 2 >= (int64_t(1) << 31))
    return fail("M = ", m, ", K = ", k, " is too large for 32-bit indexing of the image");
  return Error::success();
}

/// Launches `spec` once the arguments are checked.
static Error launchChecked(const char *api, Device &dev, void *stream, const KernelSpec &spec,
                           const void *a, int64_t m, std::vector<void *> outputs,
                           const ImageStream *streamed) {
  auto fail = [&](const auto &...parts) { return makeError(api, ": ", parts...); };
  if (streamed) {
    if (!streamed->flags)
      return fail("the streamed image's flags pointer must not be null");
    if (streamed->workgroupsPerSm < 1 || streamed->workgroupsPerSm > 16)
      return fail("the streamed image takes 1 to 16 quantizer workgroups per SM, got ",
                  streamed->workgroupsPerSm);
  }
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(spec);
  if (!kernel)
    return kernel.takeError();
  void *aPtr = const_cast<void *>(a);
  int32_t m32 = int32_t(m);
  std::vector<void *> args{&aPtr};
  for (void *&p : outputs)
    args.push_back(&p);
  args.push_back(&m32);
  LaunchGeometry g = (*kernel)->geometry(m);
  void *flags = streamed ? streamed->flags : nullptr;
  if (streamed) {
    args.push_back(&flags);
    g.persistentPerSm = unsigned(streamed->workgroupsPerSm);
  }
  return dev.launch(**kernel, g, args.data(), stream);
}

Error launchQuantizerSpec(const char *api, Device &dev, void *stream, const KernelSpec &spec,
                          const void *a, int64_t m, std::vector<void *> outputs,
                          const ImageStream *streamed) {
  if (Error e = checkQuantizerArgs(api, spec.op, a, m, spec.k, outputs))
    return e;
  return launchChecked(api, dev, stream, spec, a, m, std::move(outputs), streamed);
}

/// Launches quant_mxfp4 (outputs: codes, scales) or qdq_mxfp4 (output: the
/// activation image) after the checks both share.
static Error launchQuantizer(const char *api, OpKind op, Device &dev, void *stream, const void *a,
                             int64_t m, int64_t k, std::vector<void *> outputs,
                             ScaleRounding rounding, std::optional<Arch> archOpt, int64_t bm = 0,
                             const ImageStream *streamed = nullptr) {
  auto fail = [&](const auto &...parts) { return makeError(api, ": ", parts...); };
  if (Error e = checkQuantizerArgs(api, op, a, m, k, outputs))
    return e;
  Expected<Arch> arch = archOpt ? Expected<Arch>(*archOpt) : targetArch(&dev);
  if (!arch)
    return arch.takeError();
  Expected<KernelSpec> spec =
      makeQuantizeMxSpec(*arch, k, bm ? bm : selectQuantizeMxBm(m, k), rounding, op);
  if (!spec)
    return spec.takeError();
  if (streamed) {
    // imageStream 0 is the plain quantizer, which publishes nothing: a GEMM
    // waiting on the flags would spin forever.
    if (streamed->splits < 1)
      return fail("the streamed image needs at least one split, got ", streamed->splits);
    spec->imageStream = streamed->splits;
    if (Error e = verifyKernelSpec(*spec))
      return fail(e.message());
  }
  return launchChecked(api, dev, stream, *spec, a, m, std::move(outputs), streamed);
}

Error quantizeMxfp4(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *codes,
                    void *scales, ScaleRounding rounding, std::optional<Arch> arch) {
  return launchQuantizer("quantizeMxfp4", OpKind::QuantizeMx, dev, stream, a, m, k,
                         {codes, scales}, rounding, arch);
}

Error qdqMxfp4(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *out,
               ScaleRounding rounding, std::optional<Arch> arch, int64_t bm) {
  return launchQuantizer("qdqMxfp4", OpKind::QdqMx, dev, stream, a, m, k, {out}, rounding, arch,
                         bm);
}

Error qdqMxfp4Streamed(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *out,
                       const ImageStream &s, ScaleRounding rounding, std::optional<Arch> arch,
                       int64_t bm) {
  return launchQuantizer("qdqMxfp4Streamed", OpKind::QdqMx, dev, stream, a, m, k, {out}, rounding,
                         arch, bm ? bm : streamedQuantizerRows(m), &s);
}

} // namespace mxfp4
