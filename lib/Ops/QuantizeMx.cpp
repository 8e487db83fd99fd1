//===- QuantizeMx.cpp - The public MXFP4 quantizer op ---------------------===//

#include "mxfp4/Ops/QuantizeMx.h"
#include "QuantizeMxLaunch.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Support/Checked.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

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
                                std::initializer_list<void *> outputs) {
  auto fail = [&](const auto &...parts) { return makeError(api, ": ", parts...); };
  if (m < 1)
    return fail("M must be >= 1, got ", m);
  if (!a || std::find(outputs.begin(), outputs.end(), nullptr) != outputs.end())
    return fail("the input and output pointers must not be null");
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0)
    return fail("the input pointer must be 16-byte aligned");
  // codes: 4-byte words; the dequantized values: 16-byte units.
  if (reinterpret_cast<uintptr_t>(*outputs.begin()) % (op == OpKind::QdqMx ? 16 : 4) != 0)
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

Error launchQuantizerKernel(const char *api, Device &dev, void *stream,
                            const CompiledKernel &kernel, const LaunchGeometry &geometry,
                            const void *a, int64_t m, std::initializer_list<void *> outputs,
                            const ImageStream *streamed) {
  auto fail = [&](const auto &...parts) { return makeError(api, ": ", parts...); };
  // quant_mxfp4 writes codes and scales, qdq_mxfp4 the image.
  if (outputs.size() != (kernel.spec.op == OpKind::QdqMx ? 1u : 2u))
    return fail("internal error: ", outputs.size(), " outputs for ", kernel.symbol);
  if (Error e = checkQuantizerArgs(api, kernel.spec.op, a, m, kernel.spec.k, outputs))
    return e;
  if (streamed) {
    if (!streamed->flags)
      return fail("the streamed image's flags pointer must not be null");
    if (streamed->workgroupsPerSm < 1 || streamed->workgroupsPerSm > 16)
      return fail("the streamed image takes 1 to 16 quantizer workgroups per SM, got ",
                  streamed->workgroupsPerSm);
  }
  // Arguments in the kernel's order (Kernels/QuantizeMx.h): A, the outputs,
  // M, and the streamed image's flags.
  void *values[4] = {const_cast<void *>(a)};
  std::copy(outputs.begin(), outputs.end(), values + 1);
  int32_t m32 = int32_t(m);
  void *args[5];
  size_t n = 0;
  for (size_t i = 0; i <= outputs.size(); ++i)
    args[n++] = &values[i];
  args[n++] = &m32;
  LaunchGeometry g = geometry;
  if (streamed) {
    values[3] = streamed->flags;
    args[n++] = &values[3];
    g.persistentPerSm = unsigned(streamed->workgroupsPerSm);
  }
  return dev.launch(kernel, g, args, stream);
}

/// Launches quant_mxfp4 (outputs: codes, scales) or qdq_mxfp4 (output: the
/// activation image) after the checks both share.
static Error launchQuantizer(const char *api, OpKind op, Device &dev, void *stream, const void *a,
                             int64_t m, int64_t k, std::initializer_list<void *> outputs,
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
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(*spec);
  if (!kernel)
    return kernel.takeError();
  return launchQuantizerKernel(api, dev, stream, **kernel, (*kernel)->geometry(m), a, m, outputs,
                               streamed);
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
