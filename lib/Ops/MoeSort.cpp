//===- MoeSort.cpp - MoE token sorting on the device ----------------------===//

#include "mxfp4/Ops/MoeSort.h"
#include "mxfp4/JIT/Jit.h"

#include <vector>

namespace mxfp4 {

Error moeSort(Device &dev, void *stream, const MoeSortShape &shape, const MoeSortBuffers &buf,
              std::optional<Arch> archOpt) {
  auto fail = [](const auto &...parts) { return makeError("moeSort: ", parts...); };
  if (Error e = checkMoeSortShape(shape))
    return e;
  const void *required[] = {buf.topkIds,       buf.topkWeights, buf.sortedIds,
                            buf.sortedWeights, buf.expertIds,   buf.numValid,
                            buf.status,        buf.workspace,   buf.positions};
  for (const void *p : required)
    if (!p)
      return fail("only the expert mask may be null");
  for (const void *p : required)
    if (reinterpret_cast<uintptr_t>(p) % 4 != 0)
      return fail("every buffer must be 4-byte aligned");
  if (reinterpret_cast<uintptr_t>(buf.expertMask) % 4 != 0)
    return fail("the expert mask must be 4-byte aligned");
  Expected<Arch> arch = archOpt ? Expected<Arch>(*archOpt) : targetArch(&dev);
  if (!arch)
    return arch.takeError();
  Expected<std::array<KernelSpec, 2>> specs =
      makeMoeSortSpecs(*arch, shape.experts, shape.topk, shape.blockM);
  if (!specs)
    return specs.takeError();
  std::shared_ptr<const CompiledKernel> kernels[2];
  for (int i = 0; i < 2; ++i) {
    Expected<std::shared_ptr<const CompiledKernel>> k = Jit::global().get((*specs)[size_t(i)]);
    if (!k)
      return k.takeError();
    kernels[i] = *k;
  }
  void *ids = const_cast<int32_t *>(buf.topkIds);
  void *weights = const_cast<float *>(buf.topkWeights);
  // Without a mask the kernels never read it: any valid pointer will do.
  void *mask = buf.expertMask ? const_cast<int32_t *>(buf.expertMask) : ids;
  void *counts = buf.workspace, *status = buf.status, *sortedIds = buf.sortedIds,
       *sortedWeights = buf.sortedWeights, *expertIds = buf.expertIds, *numValid = buf.numValid,
       *positions = buf.positions;
  int32_t tokens = int32_t(shape.tokens), masked = buf.expertMask ? 1 : 0;
  void *countArgs[] = {&ids, &mask, &counts, &status, &positions, &tokens, &masked};
  if (Error e = dev.launch(*kernels[0], kernels[0]->geometry(shape.tokens), countArgs, stream))
    return e;
  void *placeArgs[] = {&ids,       &weights,  &mask,      &counts, &sortedIds, &sortedWeights,
                       &expertIds, &numValid, &positions, &tokens, &masked};
  return dev.launch(*kernels[1], kernels[1]->geometry(shape.tokens), placeArgs, stream);
}

} // namespace mxfp4
