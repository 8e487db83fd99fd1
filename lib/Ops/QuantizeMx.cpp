//===- QuantizeMx.cpp - The public MXFP4 quantizer op ---------------------===//

#include "mxfp4/Ops/QuantizeMx.h"
#include "mxfp4/JIT/Jit.h"

#include <cstdint>

namespace mxfp4 {

int64_t selectQuantizeMxBm(int64_t m) {
  int64_t bm = 8; // no idle rows for small M
  while (bm < m && bm < 64)
    bm *= 2;
  return bm;
}

Error quantizeMxfp4(Device &dev, void *stream, const void *a, int64_t m, int64_t k, void *codes,
                    void *scales, ScaleRounding rounding, std::optional<Arch> archOpt) {
  auto fail = [](const auto &...parts) { return makeError("quantizeMxfp4: ", parts...); };
  if (m < 1)
    return fail("M must be >= 1, got ", m);
  if (!a || !codes || !scales)
    return fail("the input, codes and scales pointers must not be null");
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0)
    return fail("the input pointer must be 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(codes) % 4 != 0)
    return fail("the codes pointer must be 4-byte aligned");
  // Kernels index with 32 bits; the input is addressed in 16-byte units.
  if (k > 0 && m * k / 8 >= (int64_t(1) << 31))
    return fail("M = ", m, ", K = ", k, " is too large for 32-bit indexing");
  Expected<Arch> arch = archOpt ? Expected<Arch>(*archOpt) : targetArch(&dev);
  if (!arch)
    return arch.takeError();
  Expected<KernelSpec> spec = makeQuantizeMxSpec(*arch, k, selectQuantizeMxBm(m), rounding);
  if (!spec)
    return spec.takeError();
  Expected<std::shared_ptr<const CompiledKernel>> kernel = Jit::global().get(*spec);
  if (!kernel)
    return kernel.takeError();
  void *aPtr = const_cast<void *>(a);
  int32_t m32 = int32_t(m);
  void *args[] = {&aPtr, &codes, &scales, &m32};
  return dev.launch(**kernel, (*kernel)->geometry(m), args, stream);
}

} // namespace mxfp4
